#!/usr/bin/env bash
# Usage: tools/vm/run.sh --kernel VERSION [--mem SIZE] [--timeout SECONDS] [--guests N] -- SCRIPT [ARGS...]
#
# Boots a Debian stock kernel (6.1 or 6.12) under QEMU TCG with this machine's
# root filesystem shared read-only (plus a tmpfs overlay, so the guest can
# write anywhere), runs SCRIPT as root in the current directory inside the
# guest, streams the console and exits with the script's exit status.
# CI, BPFBOX and every BPFBOX_* variable are passed into the guest.
# --guests N: how many guests run at once on this machine (make vm-test runs one per
# kernel). The guest has two vCPUs; when the guests' vCPUs outnumber the host's cores, they
# share one host thread per guest (TCG's round-robin) instead of one each: oversubscribed
# vCPU threads spin on each other's locks, which made every file about three times slower
# (docs/vm.md, Timing).
# Exit status: the script's; 124 on timeout; 125 if the guest ended without
# reporting one (kernel panic, init failure); 2 on usage errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage() {
	sed -n '2p' "$0" | sed 's/^# //' >&2
	exit 2
}
say() { echo "vm: $*" >&2; }

kernel="" mem=2G timeout=900 guests=1
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--guests) guests=${2:?}; shift 2 ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
{ [ -n "$kernel" ] && [ $# -ge 1 ]; } || usage
[[ "$timeout" =~ ^[0-9]+$ ]] || usage
[[ "$guests" =~ ^[1-9][0-9]*$ ]] || usage
script=$1
# SCRIPT is a file (run in the guest from the same cwd) or a command on PATH.
[ -e "$script" ] || command -v "$script" >/dev/null ||
	{ say "$script: no such file or command"; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { say "qemu-system-x86_64 missing: apt-get install qemu-system-x86"; exit 2; }

"$here/fetch-kernel.sh" "$kernel"
base_initrd=$("$here/build-initramfs.sh" "$kernel")
kdir=${BPFBOX_VM_CACHE:-/var/cache/bpfbox-vm}/$kernel

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; } # quote for the guest's sh
cwd=$(pwd -P)
# The guest mounts a fresh tmpfs on /tmp, which would hide the work tree if it
# lives there; then it keeps the (writable) overlay /tmp instead.
tmpfs=1
for p in "$cwd" "$(realpath -e "$script" 2>/dev/null || true)"; do
	case "$p/" in /tmp/*) tmpfs=0 ;; esac
done
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
{
	echo "BPFBOX_VM_CWD=$(q "$cwd")"
	echo "BPFBOX_VM_NONCE=$nonce"
	echo "BPFBOX_VM_TMPFS=$tmpfs"
	while IFS= read -r name; do
		echo "export $name=$(q "${!name}")"
	done < <(compgen -e | grep -E '^(CI|BPFBOX(_[A-Za-z0-9_]*)?)$' || true)
	printf 'set --'
	for a in "$@"; do printf ' %s' "$(q "$a")"; done
	echo
} >"$tmp/job"
# The kernel unpacks concatenated cpio archives in order: /job joins the cached image.
(cd "$tmp" && echo job | cpio --quiet -o -H newc -R 0:0) >"$tmp/job.cpio"
cat "$base_initrd" "$tmp/job.cpio" >"$tmp/initrd"

# Prefer the uncompressed ELF kernel (PVH boot, no decompression under TCG).
image=$kdir/vmlinux
[ -f "$image" ] || image=$kdir/vmlinuz
vcpus=2 tcg=tcg
[ $((guests * vcpus)) -le "$(nproc)" ] || tcg=tcg,thread=single
say "booting Debian kernel $(cat "$kdir/release") ($tcg, $vcpus vCPUs, $mem, timeout ${timeout}s): $*"
qemu=(qemu-system-x86_64 -accel "$tcg" -cpu max -smp "$vcpus" -m "$mem"
	-nographic -no-reboot -nic none
	-kernel "$image" -initrd "$tmp/initrd"
	-append "console=ttyS0 quiet panic=-1"
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap)

# Stream the console without CRs, terminal escapes and the firmware banner.
# The marker line carries the exit status; what follows it (power-off noise)
# is dropped, so the script's last line stays the last line of the output.
marker="BPFBOX-VM-EXIT $nonce "
start=$SECONDS
# One boot: the console streamed; $tmp/status gets the marker's status, $tmp/userspace
# is made when the guest's init reached userspace.
boot() {
	rm -f "$tmp/status" "$tmp/userspace"
	set +e
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 |
		sed -u -e 's/\r//g; s/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' \
			-e '/^SeaBIOS (version/d; /^Booting from ROM\.*$/d; s/^Booting from ROM\.*//' | {
		done=0
		while IFS= read -r line || [ -n "$line" ]; do
			if [ $done = 1 ]; then
				continue
			elif [[ "$line" == *"$marker"* ]]; then
				[ -n "${line%%"$marker"*}" ] && printf '%s\n' "${line%%"$marker"*}"
				printf '%s\n' "${line#*"$marker"}" >"$tmp/status"
				done=1
			else
				[[ "$line" == "bpfbox-vm: "*", userspace after "* ]] && : >"$tmp/userspace"
				printf '%s\n' "$line"
			fi
		done
	}
	qemu_rc=${PIPESTATUS[0]}
	set -e
}
boot
# Under TCG with two vCPUs the guest's kernel now and then dies while it patches its own
# text at boot (an int3 oops in the idle loop), before any of SCRIPT ran: one more boot
# then, said, never after the script started.
if [ ! -e "$tmp/status" ] && [ ! -e "$tmp/userspace" ] && [ "$qemu_rc" != 124 ] && [ "$qemu_rc" != 137 ]; then
	say "the guest's kernel ended before userspace (qemu exit $qemu_rc, console above): booting it once more"
	boot
fi

status=$(grep -Eo '^[0-9]+' "$tmp/status" 2>/dev/null || true)
if [[ "$status" =~ ^[0-9]+$ ]]; then
	[ "$status" = 0 ] || say "$1 exited $status on kernel $kernel ($((SECONDS - start))s)"
	exit "$status"
fi
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	say "TIMEOUT: guest did not finish within ${timeout}s on kernel $kernel"
	exit 124
fi
say "FAILED: guest on kernel $kernel ended without reporting an exit status" \
	"(qemu exit $qemu_rc; kernel panic or init failure, see console output above)"
exit 125
