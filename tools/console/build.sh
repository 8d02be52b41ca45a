#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds bpfbox's Cockpit page into OUT/share/cockpit/bpfbox (the tree a package installs
# under /usr/share/cockpit, and XDG_DATA_DIRS for a test): the manifest, one HTML file per
# page, and per page one JavaScript and one CSS bundle that esbuild makes from console/src/
# (React and PatternFly React, as Cockpit's own pages use them) with PatternFly's fonts.
# Everything comes from the npm packages pinned in console/package-lock.json, installed
# into OUT/npm once per lock (npm ci: the lock's versions and hashes, no scripts; esbuild's
# binary is its platform package, an optional dependency that needs no install script).
# The bundles are not minified and have no source map: what is shipped reads as the
# source, which is in the source package. cockpit.js is Cockpit's own, loaded by each page
# from ../base1/, never bundled.
# usage: build.sh OUT
set -euo pipefail
out=$1
src=$(cd "$(dirname "$0")/../../console" && pwd)
npm_dir=$out/npm
if ! cmp -s "$src/package-lock.json" "$npm_dir/package-lock.json" || [ ! -d "$npm_dir/node_modules" ]; then
	rm -rf "$npm_dir"
	mkdir -p "$npm_dir"
	cp "$src/package.json" "$src/package-lock.json" "$npm_dir/"
	(cd "$npm_dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
pkg=$out/share/cockpit/bpfbox
rm -rf "$pkg"
mkdir -p "$pkg"
cp "$src/manifest.json" "$src/index.html" "$src/events.html" "$src/sandboxes.html" "$pkg/"
# NODE_PATH: the sources are in console/src, their packages in OUT/npm.
NODE_PATH=$npm_dir/node_modules "$npm_dir/node_modules/.bin/esbuild" \
	index="$src/src/policy/index.jsx" events="$src/src/events/index.jsx" sandboxes="$src/src/sandboxes/index.jsx" \
	--bundle --format=iife --target=es2020 --charset=utf8 --legal-comments=eof \
	--define:process.env.NODE_ENV='"production"' \
	--loader:.woff2=file --loader:.woff=file --loader:.ttf=file --loader:.eot=file \
	--loader:.svg=file --loader:.png=file --loader:.jpg=file --asset-names='assets/[name]-[hash]' \
	--outdir="$pkg" --log-level=warning
echo "console: $pkg"
