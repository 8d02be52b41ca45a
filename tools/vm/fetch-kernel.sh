#!/usr/bin/env bash
# Usage: tools/vm/fetch-kernel.sh VERSION     (VERSION: 6.1 or 6.12)
#
# Puts a Debian stock kernel into ${BPFBOX_VM_CACHE:-/var/cache/bpfbox-vm}/VERSION/:
#   vmlinuz, vmlinux (the same kernel uncompressed, when it has a PVH entry),
#   modules/*.ko (uncompressed), modules/order (load order), release, package.
# Debian's stock kernels enable the bpf LSM by default, which is why we use them.
# A second call with a complete cache returns at once.
set -euo pipefail

# The modules the guest needs for 9p + overlay (and veth for the network tests'
# namespaces); any of them may be built in.
WANT_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
netfs fscache 9pnet 9pnet_virtio 9p overlay veth"
# Modules a test loads itself (insmod from this cache's modules/, in the order
# of modules/extra-order, dependencies first): not in the boot order nor in the
# stamp. A complete cache that lacks one gets it added in place (the boot
# modules and the initramfs stay as they are, so runs using the cache go on).
# crc32c_generic is what libcrc32c (SCTP's checksum) asks the crypto API for.
EXTRA_MODULES="loop crc32c_generic sctp"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "fetch-kernel: $*" >&2; exit 1; }

version=${1:-}
case "$version" in
6.1) suite=bookworm ;;
6.12) suite=trixie ;;
*) die "usage: $0 6.1|6.12" ;;
esac

cache=${BPFBOX_VM_CACHE:-/var/cache/bpfbox-vm}
dest=$cache/$version
stamp="v2 modules: $(echo "$WANT_MODULES" | xargs)" # bump when the cache layout changes
extras_stamp="extras: $(echo "$EXTRA_MODULES" | xargs)"
complete() { [ -f "$dest/vmlinuz" ] && [ "$(cat "$dest/.complete" 2>/dev/null)" = "$stamp" ]; }
extras_done() { [ "$(cat "$dest/.extras" 2>/dev/null)" = "$extras_stamp" ]; }
complete && extras_done && exit 0

# One fetch per version at a time; a run that waited finds the cache filled.
mkdir -p "$cache"
exec 9>"$cache/.lock-$version"
flock 9
complete && extras_done && exit 0

for tool in apt-get apt-cache dpkg-deb xz flock; do
	command -v "$tool" >/dev/null || die "$tool not found (Debian host required)"
done
[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"

# Print "URI SUITE" for every enabled deb source of this machine, from both the
# one-line (*.list) and the deb822 (*.sources) formats.
host_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" { print $2, $3 }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'function flush() {
			     if (deb && enabled) for (i in u) for (j in s) print u[i], s[j]
			     deb = 0; enabled = 1; delete u; delete s }
		     BEGIN { enabled = 1 }
		     /^#/ { next }
		     /^[ \t]*$/ { flush(); next }
		     tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		     tolower($1) == "uris:" { for (i = 2; i <= NF; i++) u[i] = $i }
		     tolower($1) == "suites:" { for (i = 2; i <= NF; i++) s[i] = $i }
		     tolower($1) == "enabled:" && tolower($2) == "no" { enabled = 0 }
		     END { flush() }' "$f"
	done
}

# A throwaway apt configuration for $suite: the machine's own mirrors (main,
# -updates, -security) with the host's codename swapped for $suite. It keeps
# its lists beside the cache, so the machine's apt state is never touched and
# stale system lists cannot point at packages the mirror has dropped.
host_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$host_codename" ] || die "cannot read VERSION_CODENAME from /etc/os-release"
aptdir=$cache/apt/$suite
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/empty.d"
host_sources | awk -v host="$host_codename" -v want="$suite" -v key="$KEYRING" '
	$2 == host || index($2, host "-") == 1 {
		s = $2; sub("^" host, want, s)
		if (!seen[$1 " " s]++) printf "deb [signed-by=%s] %s %s main\n", key, $1, s
	}' >"$aptdir/sources.list"
[ -s "$aptdir/sources.list" ] ||
	die "no Debian source for '$host_codename' in /etc/apt to derive a $suite source from"

apt_opts=(-q -o Dir::Etc::sourcelist="$aptdir/sources.list" -o Dir::Etc::sourceparts="$aptdir/empty.d"
	-o Dir::Etc::preferencesparts="$aptdir/empty.d" -o Dir::State::Lists="$aptdir/lists"
	-o Dir::Cache="$aptdir/cache" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
	-o APT::Sandbox::User=root)

echo "fetch-kernel: updating package lists for $suite" >&2
apt-get "${apt_opts[@]}" update >&2 || die "apt-get update for $suite failed"
# linux-image-amd64 is the metapackage; it depends on the current ABI's image.
pkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 |
	awk '$1 ~ /Depends:$/ && $2 ~ /^linux-image-[0-9].*-amd64$/ { print $2; exit }')
[ -n "$pkg" ] || die "cannot resolve linux-image-amd64 in $suite"
# A complete cache missing extras needs the very kernel it holds (a module of
# another build would not load).
if complete; then
	pkg="$(sed -n 's/^Package: //p' "$dest/package")=$(sed -n 's/^Version: //p' "$dest/package")"
fi

work=$(mktemp -d "$cache/.fetch-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "fetch-kernel: downloading $pkg ($suite)" >&2
(cd "$work" && apt-get "${apt_opts[@]}" download "$pkg" >&2) ||
	die "apt-get download $pkg failed$(complete && echo " (to refetch the current kernel, remove $dest once no run uses it)")"
dpkg-deb -x "$work"/*.deb "$work/root"

vmlinuz=$(find "$work/root/boot" -name 'vmlinuz-*' | head -n1)
[ -n "$vmlinuz" ] || die "$pkg has no vmlinuz"
release=${vmlinuz##*/vmlinuz-}
moddir=$(find "$work/root" -type d -path "*/modules/$release" | head -n1)
[ -n "$moddir" ] || die "$pkg has no modules for $release"

# bzImage -> ELF vmlinux. QEMU boots an ELF kernel through its PVH entry point,
# which skips the in-guest decompressor: 1-7 s under TCG.
extract_vmlinux() {
	local img=$1 out=$2 setup off len start dec
	command -v readelf >/dev/null || return 1
	rd() { od -An -tu"$1" -j "$2" -N"$1" "$img" | tr -d ' '; }
	setup=$(rd 1 $((0x1f1))) # boot protocol: setup_sects, payload_offset/length
	[ "$setup" = 0 ] && setup=4
	off=$(rd 4 $((0x248)))
	len=$(rd 4 $((0x24c)))
	start=$(((setup + 1) * 512 + off))
	case $(od -An -tx1 -j "$start" -N4 "$img" | tr -d ' ') in
	fd377a58) dec="xz -dc" ;;
	28b52ffd) dec="zstd -qdc" ;;
	1f8b08*) dec="gzip -dc" ;;
	*) return 1 ;;
	esac
	command -v "${dec%% *}" >/dev/null || return 1
	# The payload ends with the 4-byte decompressed size the kernel build appends.
	dd if="$img" iflag=skip_bytes,count_bytes skip="$start" count=$((len - 4)) bs=1M status=none |
		$dec >"$out" || return 1
	# ELF note 18 is XEN_ELFNOTE_PHYS32_ENTRY, the PVH entry QEMU needs.
	[ "$(readelf -n "$out" 2>/dev/null | grep -Ec 'Xen .*(0x00000012|PHYS32)')" -gt 0 ]
}

# Copy the wanted modules (and anything they depend on) in load order.
out=$work/out
mkdir -p "$out/modules" "$work/extra"
: >"$out/modules/order"
: >"$work/extra/extra-order"
# The "depends=" string of the .modinfo section; avoids needing kmod's modinfo.
modinfo_depends() {
	tr '\0' '\n' <"$1" | sed -n 's/^depends=//p' | head -n1
}
# add_module NAME DIR: NAME and its dependencies into DIR, listed in DIR's
# order file (order or extra-order) after what they need. A module already in
# the boot order ($boot_order) is not copied again.
add_module() {
	local name=$1 dir=$2 list file dep
	list=$dir/order
	[ "$dir" = "$work/extra" ] && list=$dir/extra-order
	grep -qx "$name" "$list" && return 0
	[ -n "${boot_order:-}" ] && grep -qx "$name" "$boot_order" && return 0
	file=$(find "$moddir" -name "$name.ko" -o -name "$name.ko.xz" -o -name "$name.ko.zst" |
		head -n1)
	if [ -z "$file" ]; then
		# Built in (6.12 has virtio and more built in) or absent from this kernel
		# (fscache merged into netfs in 6.8): the guest does without it.
		grep -q "/$name.ko\$" "$moddir/modules.builtin" 2>/dev/null ||
			echo "fetch-kernel: note: $name is neither a module nor built in on $release" >&2
		return 0
	fi
	case "$file" in
	*.xz) xz -dc "$file" >"$dir/$name.ko" ;;
	*.zst) zstd -qdc "$file" >"$dir/$name.ko" ;;
	*) cp "$file" "$dir/$name.ko" ;;
	esac
	for dep in $(modinfo_depends "$dir/$name.ko" | tr ',' ' '); do
		add_module "${dep//-/_}" "$dir"
	done
	echo "$name" >>"$list"
}

if complete; then
	# Only extras are missing: add them beside the boot modules, each file
	# renamed into place, the list and the stamp last.
	[ "$release" = "$(cat "$dest/release")" ] || die "$pkg holds $release, the cache $(cat "$dest/release")"
	boot_order=$dest/modules/order
	for m in $EXTRA_MODULES; do add_module "$m" "$work/extra"; done
	for f in "$work"/extra/*.ko; do
		[ -e "$f" ] || continue
		cp "$f" "$dest/modules/.${f##*/}.tmp"
		mv "$dest/modules/.${f##*/}.tmp" "$dest/modules/${f##*/}"
	done
	cp "$work/extra/extra-order" "$dest/modules/.extra-order.tmp"
	mv "$dest/modules/.extra-order.tmp" "$dest/modules/extra-order"
	echo "$extras_stamp" >"$dest/.extras"
	echo "fetch-kernel: $version: added extra modules: $(xargs <"$dest/modules/extra-order")" >&2
	exit 0
fi

for m in $WANT_MODULES; do add_module "$m" "$out/modules"; done
boot_order=$out/modules/order
for m in $EXTRA_MODULES; do add_module "$m" "$work/extra"; done
for f in "$work"/extra/*.ko "$work/extra/extra-order"; do
	[ -e "$f" ] && mv "$f" "$out/modules/"
done

cp "$vmlinuz" "$out/vmlinuz"
extract_vmlinux "$vmlinuz" "$out/vmlinux" || rm -f "$out/vmlinux"
echo "$release" >"$out/release"
dpkg-deb -f "$work"/*.deb Package Version >"$out/package"
echo "$stamp" >"$out/.complete"
echo "$extras_stamp" >"$out/.extras"
rm -rf "$dest"
mv "$out" "$dest"
echo "fetch-kernel: $version -> $dest ($release, modules: $(xargs <"$dest/modules/order"))" >&2
