#!/usr/bin/env bash
# Usage: tools/packaging/build-deb.sh [BUILD]   (make deb)
#
# Builds BUILD/bpfbox_VERSION_amd64.deb and BUILD/bpfbox-cockpit_VERSION_all.deb (the
# Cockpit page) with dpkg-buildpackage and debhelper: copies the
# sources and tools/packaging/debian/ into BUILD/deb/bpfbox-VERSION/ (the tree's top level
# gets no debian/), writes debian/changelog from VERSION, builds there, then runs lintian,
# which must report no error and no warning that debian/bpfbox.lintian-overrides does not
# explain.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
for tool in dpkg-buildpackage dh pandoc lintian; do
	command -v "$tool" >/dev/null ||
		{ echo "build-deb: $tool missing (tools/install-deps.sh installs it)" >&2; exit 1; }
done
version=$(cat "$root/VERSION")
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || { echo "build-deb: VERSION '$version' is not a Debian version" >&2; exit 1; }

work=$build/deb
src=$work/bpfbox-$version
rm -rf "$work"
mkdir -p "$src"
# What the build and the package need; nothing of build/, .git or the VM harness.
(cd "$root" && cp -a Makefile VERSION README.md bpf include user docs schema policy-examples console "$src/")
mkdir -p "$src/tools" "$src/tests"
cp -a "$root/tools/systemd" "$root/tools/packaging" "$root/tools/console" "$src/tools/"
cp -a "$root/tests/check-docs.sh" "$src/tests/"
cp -a "$root/tools/check-build-deps.sh" "$src/tools/"
cp -a "$root/tools/packaging/debian" "$src/debian"
cp "$root/tools/systemd/bpfbox.socket" "$root/tools/systemd/bpfbox.service" "$src/debian/"

# The changelog's date is the last commit's, so two builds of one commit are identical.
date=$(git -C "$root" log -1 --format=%cD 2>/dev/null || date -R)
maintainer=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
cat >"$src/debian/changelog" <<CHANGELOG
bpfbox ($version) unstable; urgency=medium

  * bpfbox $version, built from the source tree (VERSION).

 -- $maintainer  $date
CHANGELOG

(cd "$src" && dpkg-buildpackage -b -us -uc)
deb=bpfbox_${version}_amd64.deb
cockpit_deb=bpfbox-cockpit_${version}_all.deb
mv "$work/$deb" "$build/$deb"
mv "$work/$cockpit_deb" "$build/$cockpit_deb"
echo "build-deb: $build/$deb $build/$cockpit_deb"
# lintian's own temporary files in build/, removed after (it left mldbm-* in /tmp).
mkdir -p "$build/lintian-tmp"
TMPDIR=$build/lintian-tmp lintian --fail-on error,warning --info "$build/$deb" "$build/$cockpit_deb"
rm -rf "$build/lintian-tmp"
echo "build-deb: lintian: no error, no unexplained warning"
