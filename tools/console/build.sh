#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds bpfbox's Cockpit page into OUT/share/cockpit/bpfbox (the tree a package installs
# under /usr/share/cockpit, and XDG_DATA_DIRS for a test): the page's own files, and
# PatternFly's stylesheet and fonts from the npm packages pinned in console/package-lock.json,
# installed into OUT/npm once per lock (npm ci: the lock's versions and hashes, no scripts).
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
pf=$npm_dir/node_modules/@patternfly/patternfly
pkg=$out/share/cockpit/bpfbox
rm -rf "$pkg"
mkdir -p "$pkg/assets"
cp "$src/manifest.json" "$src/index.html" "$src/events.html" "$src/sandboxes.html" "$src/common.js" \
	"$src/bpfbox.js" "$src/visual.js" "$src/events.js" "$src/sandboxes.js" "$src/service.js" "$src/bpfbox.css" "$pkg/"
cp "$pf/patternfly.min.css" "$pkg/"
cp -r "$pf/assets/fonts" "$pkg/assets/"
echo "console: $pkg"
