# shellcheck shell=bash
# A real systemd for tests whose subject is what an administrator does through it (the
# console's service card): the guest's init is run.sh's, not systemd, so systemd runs here
# as PID 1 of PID, mount and cgroup namespaces of its own, in a cgroup of its own, with a
# private /run (its bus and its sockets) and the guest's /etc and /lib (the unit files it
# enables and disables are the guest's). It boots sockets.target, in container mode
# ($container set, as systemd-nspawn sets it): no devices, no consoles.
#   sd_start           boots it; SD_PID is its PID 1 as the guest sees it, SD_BUS the
#                      address of its system bus for clients outside (DBUS_SYSTEM_BUS_ADDRESS)
#   sd_ctl ARGS...     systemctl in its namespaces
#   sd_stop            ends it and everything it started; its cgroups removed
# Sourced after lib.sh.

SD_CG=/sys/fs/cgroup/bbsystemd
SD_PID='' SD_BUS='' SD_LOG=''

sd_ctl() {
	timeout 30 nsenter -t "$SD_PID" -m -p systemctl --no-pager "$@"
}

# Units of sockets.target that cost time here and serve nothing of a test (tmpfiles walks
# the 9p root for half a minute under TCG), or that would listen beside the guest's own.
SD_MASKED="systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service systemd-journal-flush.service
	systemd-update-utmp.service systemd-sysusers.service cockpit.socket cockpit-motd.service"

# Starts it and waits (up to $1 s, default 180) until its manager says the boot is done.
sd_start() {
	local limit=${1:-180} state u
	SD_LOG=$T_TMP/systemd.log
	[ -x /lib/systemd/systemd ] || { echo "/lib/systemd/systemd is missing" >"$SD_LOG"; return 1; }
	mkdir "$SD_CG" || return 1
	# PID 1 of the namespaces: what a container's init expects (its /proc from unshare, a
	# /run of its own with the masks, the cgroup tree from its own root), then systemd.
	{
		echo 'set -e'
		echo 'mount -t tmpfs -o mode=0755 tmpfs /run'
		echo 'mkdir -p /run/systemd/system'
		for u in $SD_MASKED; do echo "ln -s /dev/null /run/systemd/system/$u"; done
		echo 'umount -l /sys/fs/cgroup'
		echo 'mount -t cgroup2 cgroup2 /sys/fs/cgroup'
		echo 'exec env container=bpfbox-test /lib/systemd/systemd --system --unit=sockets.target \'
		echo '	--show-status=false --log-target=journal-or-kmsg'
	} >"$T_TMP/sd-init.sh"
	# The shell moves itself into the cgroup first: the cgroup namespace's root is where
	# unshare runs; unshare's child is the namespaces' PID 1.
	# shellcheck disable=SC2016 # expanded by the shell it starts
	setsid sh -c 'echo $$ >"$1/cgroup.procs" && exec unshare --pid --fork --mount --cgroup \
		--propagation private --mount-proc sh "$2"' sh "$SD_CG" "$T_TMP/sd-init.sh" </dev/null >"$SD_LOG" 2>&1 &
	for _ in $(seq $((limit * 5))); do
		SD_PID=$(for p in $(cat "$SD_CG"/cgroup.procs "$SD_CG"/*/cgroup.procs 2>/dev/null); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && echo "$p"; done | head -n 1)
		[ -z "$SD_PID" ] || break
		sleep 0.2
	done
	[ -n "$SD_PID" ] || return 1
	SD_BUS=unix:path=/proc/$SD_PID/root/run/dbus/system_bus_socket
	for _ in $(seq "$limit"); do
		state=$(timeout 10 nsenter -t "$SD_PID" -m -p systemctl is-system-running 2>/dev/null)
		case $state in running | degraded) [ -S "/proc/$SD_PID/root/run/dbus/system_bus_socket" ] && return 0 ;; esac
		kill -0 "$SD_PID" 2>/dev/null || return 1
		sleep 1
	done
	return 1
}

sd_stop() {
	local d
	[ -n "$SD_PID" ] || { rmdir "$SD_CG" 2>/dev/null; return 0; }
	# The namespace's PID 1 killed: the kernel kills every process of the namespace.
	kill -KILL "$SD_PID" 2>/dev/null
	for _ in $(seq 50); do
		[ -z "$(find "$SD_CG" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
		sleep 0.2
	done
	# Its cgroups, the deepest first.
	find "$SD_CG" -depth -type d 2>/dev/null | while read -r d; do rmdir "$d" 2>/dev/null; done
	SD_PID=''
}
