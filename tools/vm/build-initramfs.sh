#!/usr/bin/env bash
# Usage: tools/vm/build-initramfs.sh VERSION
#
# Builds the initramfs (busybox-static + tools/vm/init + the kernel's modules)
# for a kernel already fetched by fetch-kernel.sh, and prints its path. It is
# cached beside the kernel and rebuilt only when one of those inputs changes.
# It is left uncompressed: under TCG, decompressing costs more than it saves.
set -euo pipefail

die() { echo "build-initramfs: $*" >&2; exit 1; }

version=${1:?usage: $0 VERSION}
here=$(cd "$(dirname "$0")" && pwd)
kdir=${BPFBOX_VM_CACHE:-/var/cache/bpfbox-vm}/$version
[ -f "$kdir/.complete" ] || die "kernel $version not fetched (tools/vm/fetch-kernel.sh $version)"

busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "busybox not found: apt-get install busybox-static"
# A dynamic busybox would find no libc in the initramfs.
if LC_ALL=C ldd "$busybox" 2>/dev/null | grep -q '=>'; then
	die "$busybox is dynamically linked: apt-get install busybox-static"
fi
command -v cpio >/dev/null || die "cpio not found: apt-get install cpio"

# Named by a hash of its inputs: concurrent runs and work trees with a different
# init never overwrite an image another run is using.
mapfile -t modules <"$kdir/modules/order"
inputs=$(cd "$kdir/modules" && sha256sum "$busybox" "$here/init" order "${modules[@]/%/.ko}" |
	awk '{ print $1 }' | sha256sum | cut -c1-16)
out=$kdir/initramfs-$inputs.cpio
if [ -f "$out" ]; then
	echo "$out"
	exit 0
fi

stage=$(mktemp -d)
image=$(mktemp "$kdir/.initramfs.XXXXXX") # same file system as $out: mv is atomic
trap 'rm -rf "$stage" "$image"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,modules}
cp "$busybox" "$stage/bin/busybox"
cp "$here/init" "$stage/init"
chmod 0755 "$stage/init" "$stage/bin/busybox"
cp "$kdir/modules/order" "$stage/modules/"
for m in "${modules[@]}"; do cp "$kdir/modules/$m.ko" "$stage/modules/"; done
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) >"$image"
chmod 0644 "$image"
mv "$image" "$out"
# Drop images of older inputs once nobody is likely to still boot them.
find "$kdir" -maxdepth 1 -name 'initramfs-*.cpio' ! -name "${out##*/}" -mmin +60 -delete
echo "$out"
