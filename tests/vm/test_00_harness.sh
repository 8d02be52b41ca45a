#!/usr/bin/env bash
# The VM is what the other tests assume: bpf LSM active, cgroup2 and bpffs
# mounted, no network but lo, the host's tools usable, root writable.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

assert_contains /sys/kernel/security/lsm '(^|,)bpf(,|$)' "bpf is in the active LSM list"
assert_eq 0 "$(id -u)" "tests run as root"
assert_contains /proc/mounts '^[^ ]+ /sys/fs/cgroup cgroup2 ' "cgroup2 is mounted at /sys/fs/cgroup"
assert_contains /proc/mounts '^[^ ]+ /sys/fs/bpf bpf ' "bpffs is mounted at /sys/fs/bpf"
assert_contains /proc/mounts '^[^ ]+ /sys/kernel/security securityfs ' "securityfs is mounted"
assert_succeeds "a cgroup can be created and removed" \
	bash -c 'mkdir /sys/fs/cgroup/t00_harness && rmdir /sys/fs/cgroup/t00_harness'
assert_eq lo "$(cd /sys/class/net && echo *)" "the only network interface is lo"
assert_contains /sys/class/net/lo/operstate '^(up|unknown)$' "lo is up"
assert_succeeds "the kernel has BTF" test -s /sys/kernel/btf/vmlinux

assert_succeeds "curl runs" curl --version
assert_succeeds "git runs" git --version
assert_succeeds "python3 runs" python3 -c 'import sys; print(sys.version)'
assert_succeeds "bpftool runs" bpftool version
assert_succeeds "bpftool probes the kernel" bpftool feature probe kernel
# The point of the VM: the development machine refuses LSM programs.
assert_contains "$T_OUT" 'program_type lsm is available' "LSM programs can be loaded"

assert_succeeds "the root filesystem is writable (tmpfs overlay)" \
	bash -c 'echo x >/usr/.bpfbox-vm-write-test && rm /usr/.bpfbox-vm-write-test'
assert_succeeds "the repository is visible" test -f "$T_ROOT/tests/vm/lib.sh"
