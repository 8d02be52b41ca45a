#!/usr/bin/env bash
# Installs the Debian packages bpfbox needs to build and test, only when missing.
set -euo pipefail
pkgs=(make gcc clang llvm bpftool libbpf-dev libcjson-dev libelf-dev libssl-dev zlib1g-dev
      libcmocka-dev libclang-rt-14-dev pkg-config jq curl git python3 qemu-system-x86 qemu-utils
      busybox-static cpio kmod bsdextrautils rsyslog wget openssl iproute2 tinyproxy
      keyutils sudo dnsmasq-base uidmap socat gdb python3-botocore
      debhelper dpkg-dev pandoc lintian bash-completion logrotate
      cockpit-ws cockpit-bridge chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# npm installs the agent CLIs (make agents); a Node.js from elsewhere may bring its own.
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
