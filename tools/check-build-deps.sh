#!/usr/bin/env bash
# Says what a plain `make` lacks before the compiler does: each missing tool or header is named
# with the Debian package that brings it. `make deps` (as root) installs them all.
set -euo pipefail
missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2 (for $1)"); }
need_hdr() {
	command -v "${CC:-cc}" >/dev/null 2>&1 || return 0
	# The compiler's own search path decides, as it will when it builds.
	echo "#include <$1>" | ${CC:-cc} -E -x c - $(pkg-config --cflags libcjson 2>/dev/null) \
		>/dev/null 2>&1 || missing+=("$2 (for <$1>)")
}
need_cmd "${CC:-cc}" gcc
need_cmd "${CLANG:-clang}" clang
need_cmd "${BPFTOOL:-bpftool}" bpftool
need_cmd pkg-config pkg-config
need_hdr bpf/bpf_helpers.h libbpf-dev
need_hdr cjson/cJSON.h libcjson-dev
need_hdr libelf.h libelf-dev
need_hdr openssl/ssl.h libssl-dev
need_hdr zlib.h zlib1g-dev
[ ${#missing[@]} -eq 0 ] && exit 0
{
	echo "bpfbox cannot be built here; missing:"
	printf '  %s\n' "${missing[@]}"
	echo "Install them with 'make deps' as root (every build and test package),"
	echo "or: apt-get install make gcc clang llvm bpftool libbpf-dev libcjson-dev libelf-dev libssl-dev zlib1g-dev pkg-config"
} >&2
exit 1
