#!/usr/bin/env bash
# Runs inside the benchmark VM (tools/bench.sh boots it), as root, from the
# repository root. Every sample goes to stdout as one line
#   BENCH <test> <contender> <unit> <value>
# because nothing the guest writes reaches the host: tools/bench.sh picks these
# lines out of the console and tools/bench/report.sh aggregates them.
# Contenders of a test run interleaved, one sample each per round, so a slow
# spell of the (shared, emulated) machine hits all of them alike.
#
# Knobs (only BPFBOX_* variables cross into the guest):
#   BPFBOX_BENCH_REPEAT   samples per contender (default 5)
#   BPFBOX_BENCH_COLD     samples of the cold start (default 3; each reloads the programs)
#   BPFBOX_BENCH_WORK     samples of each realistic job (default 3; a make takes seconds)
#   BPFBOX_BENCH_PROXY_REPEAT rounds of the proxy tests (default 3)
#   BPFBOX_BENCH_SRT_REPEAT   srt startup samples (default 3; srt takes seconds to start)
#   BPFBOX_BENCH_ITER     operations per fileops sample (default 3000; fewer is noisier under TCG)
#   BPFBOX_BENCH_ONLY     comma-separated sections (startup,fileops,work,proxy,memory)
#   BPFBOX_BENCH_GIT_FILES files in the generated git tree (default 5000)
#   BPFBOX_BENCH_EXTERNAL 0 skips tools/bench-proxy.sh
#   BPFBOX_BENCH_PROXY_MIB, BPFBOX_BENCH_PROXY_SECONDS its --size and --seconds (64, 3)
set -euo pipefail

R=${BPFBOX_BENCH_REPEAT:-5}
COLD=${BPFBOX_BENCH_COLD:-3}
WORK=${BPFBOX_BENCH_WORK:-3}
PROXY_R=${BPFBOX_BENCH_PROXY_REPEAT:-3}
SRT_R=${BPFBOX_BENCH_SRT_REPEAT:-3}
ITER=${BPFBOX_BENCH_ITER:-3000}
# The 10,000-rule policies need more than a sandbox's default share of the rule maps (8192).
BIG=(--quota rules=20000,user-rules=40000)
ONLY=${BPFBOX_BENCH_ONLY:-startup,fileops,work,proxy,memory}
GIT_FILES=${BPFBOX_BENCH_GIT_FILES:-5000}
ROOT=$(pwd -P)
B=$ROOT/build/bench
# tools/bench.sh copies the binary there, so a rebuild on the host during the
# run (others share the work tree) cannot change what is measured.
BPFBOX=$B/bpfbox
[ -x "$BPFBOX" ] || BPFBOX=$ROOT/build/bpfbox
SRT=$B/srt/node_modules/.bin/srt
T=/tmp/bench
# pyenv's shim is a shell script that would dominate the import benchmark.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
BG=()

emit() { echo "BENCH $*"; }
note() { echo "bench: $*" >&2; }
want() { [[ ",$ONLY," == *",$1,"* ]]; }
cleanup() {
	local p
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

# sample TEST CONTENDER COMMAND...: one timed run, in milliseconds.
sample() {
	local test=$1 who=$2 out
	shift 2
	if ! out=$("$B/timeit" 1 "$@"); then
		note "$test/$who failed: $*"
		return 0
	fi
	emit "$test" "$who" ms "$(awk '{ printf "%.3f", $1 / 1e6 }' <<<"$out")"
}

# policy FILE NRULES [ALLOWED_DOMAIN]: half denyRead, half allowWrite, on
# existing directories, plus the bench's own work directory as writable.
policy() {
	local file=$1 n=$2 dom=${3:-} i sep=""
	mkdir -p "$T/rules"
	{
		printf '{"network":{"allowedDomains":[%s],"deniedDomains":[]},\n' "${dom:+\"$dom\"}"
		printf ' "filesystem":{"denyWrite":[],\n  "denyRead":['
		for ((i = 0; i < n / 2; i++)); do
			printf '%s"%s/r%05d"' "$sep" "$T/rules" "$i"
			sep=,
		done
		printf '],\n  "allowWrite":["%s/work"' "$T"
		for ((i = n / 2; i < n; i++)); do printf ',"%s/r%05d"' "$T/rules" "$i"; done
		printf ']}}\n'
	} >"$file"
	if ((n > 0)); then
		seq -f "$T/rules/r%05g" 0 $((n - 1)) | xargs mkdir -p
	fi
}

# Paths of srt's helpers are given explicitly: srt looks them up by running
# which(1) with a one-second timeout, which an emulated guest can miss.
srt_settings() {
	cat >"$T/srt.json" <<JSON
{"bwrapPath":"$(command -v bwrap)","socatPath":"$(command -v socat)",
 "ripgrep":{"command":"$(command -v rg)"},
 "network":{"allowedDomains":[${1:+\"$1\"}],"deniedDomains":[]},
 "filesystem":{"denyRead":[],"allowWrite":["$T/work"],"denyWrite":[]}}
JSON
}

# hwm_during COMMAND...: runs COMMAND in the background and prints the peak
# VmHWM (KiB) of that process seen while it ran (polled every 50 ms).
hwm_during() {
	local pid hwm=0 v
	"$@" >/dev/null 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$v" ] && ((v > hwm)) && hwm=$v
		sleep 0.05
	done
	wait "$pid" || note "hwm_during: $* failed"
	echo "$hwm"
}

# Waits until a sandbox cgroup exists: a background launcher has set up.
wait_sandbox() {
	until compgen -G '/sys/fs/cgroup/bpfbox/bb-*' >/dev/null; do sleep 0.1; done
}

mkdir -p "$T/work"
note "kernel $(uname -r), $(nproc) CPUs, repeat $R, cold $COLD, iter $ITER, sections $ONLY"
emit meta kernel text "$(uname -r)"
emit meta repeat count "$R"
emit meta iter count "$ITER"
"$BPFBOX" gc --all >/dev/null 2>&1 || true
srt_ok=0
if [ -x "$SRT" ]; then
	# srt gives socat 0.6 s to create its bridge sockets (five polls, 0, 100,
	# 200, 300 ms apart); an emulated guest under load needs longer. The
	# guest's copy (an overlay: the host's stays as installed) polls up to
	# twelve times, 6.6 s in all, which changes nothing when socat is quick.
	# Likewise its which(1) lookups (ripgrep has no path setting) get 10 s, not 1.
	d=$B/srt/node_modules/@anthropic-ai/sandbox-runtime/dist
	sed -i 's/const maxAttempts = 5;/const maxAttempts = 12;/' "$d/sandbox/linux-sandbox-utils.js" || true
	sed -i 's/timeout: 1000,/timeout: 10000,/' "$d/utils/which.js" || true
fi
if [ -x "$SRT" ] && command -v bwrap >/dev/null && command -v socat >/dev/null; then
	srt_settings ""
	if "$SRT" -s "$T/srt.json" -c true >"$T/srt.err" 2>&1; then
		srt_ok=1
	else
		note "srt does not run here, leaving it out: $(tail -n 3 "$T/srt.err")"
	fi
else
	note "srt, bwrap or socat missing: srt left out"
fi
bwrap_ok=0
if bwrap --ro-bind / / true 2>/dev/null; then bwrap_ok=1; else note "bwrap does not run here"; fi

if want startup; then
	note "startup"
	policy "$T/p0.json" 0
	"$BPFBOX" exec -- true # warm the pins
	# The daemon, with its ceiling and log, for a user made here (the guest's root is an overlay).
	daemon_ok=0
	id bbbench >/dev/null 2>&1 || useradd -M -d /tmp bbbench 2>/dev/null
	if id bbbench >/dev/null 2>&1; then
		"$BPFBOX" daemon --socket "$T/daemon.sock" --config "$T/p0.json" --log-file "$T/daemon.ndjson" \
			--max-per-user 0 2>"$T/daemon.err" &
		BG+=($!)
		for _ in $(seq 100); do [ -S "$T/daemon.sock" ] && break; sleep 0.1; done
		[ -S "$T/daemon.sock" ] && daemon_ok=1 || note "the daemon did not start: $(cat "$T/daemon.err")"
	fi
	for ((i = 0; i < R; i++)); do
		sample startup bare true
		sample startup bpfbox-warm "$BPFBOX" exec -- true
		((bwrap_ok)) && sample startup bwrap bwrap --ro-bind / / true
		((srt_ok && i < SRT_R)) && srt_settings "" && sample startup srt "$SRT" -s "$T/srt.json" -c true
		if ((daemon_ok)); then
			# Through the daemon, as a user who is not root; the same chain without bpfbox
			# (runuser, then env naming the socket: an exec of its own) measured beside it.
			sample startup user-bare runuser -u bbbench -- env BPFBOX_SOCKET="$T/daemon.sock" true
			sample startup bpfbox-daemon runuser -u bbbench -- env BPFBOX_SOCKET="$T/daemon.sock" \
				"$BPFBOX" exec -- true
		fi
	done
	# Where a warm start's time goes: BPFBOX_TRACE_START=1 marks each step of a
	# run (user/lib/start_trace.h); one start-step row per step and run, named
	# root:STEP or daemon:STEP (the client's steps and its worker's). The
	# worker's first step counts from the daemon's reading of the request.
	trace_steps() { # trace_steps PREFIX CMD...
		local prefix=$1 line step name
		shift
		{ "$@" 2>&1 >/dev/null || note "traced start failed: $*"; } | { grep 'bpfbox: start-trace' || true; } |
			while read -r line; do
				step=${line#*step=}
				name=${step#* }
				emit start-step "$prefix:${name// /-}" ms "${step%% *}"
			done
	}
	if ((daemon_ok)); then
		BPFBOX_TRACE_START=1 "$BPFBOX" daemon --socket "$T/daemon-trace.sock" --config "$T/p0.json" \
			--log-file "$T/daemon-trace.ndjson" --max-per-user 0 2>"$T/daemon-trace.err" &
		BG+=($!)
		for _ in $(seq 100); do [ -S "$T/daemon-trace.sock" ] && break; sleep 0.1; done
	fi
	for ((i = 0; i < R; i++)); do
		sample startup bpfbox-version "$BPFBOX" --version
		trace_steps root env BPFBOX_TRACE_START=1 "$BPFBOX" exec -- true
		[ -S "$T/daemon-trace.sock" ] && trace_steps daemon runuser -u bbbench -- env BPFBOX_TRACE_START=1 \
			BPFBOX_SOCKET="$T/daemon-trace.sock" "$BPFBOX" exec -- true
	done
	for ((i = 0; i < COLD; i++)); do
		"$BPFBOX" gc --all >/dev/null
		sample startup bpfbox-cold "$BPFBOX" exec -- true
	done
fi

if want fileops; then
	note "fileops"
	F=$T/work/tree/a/b/c/d/e/f/g/h
	mkdir -p "$F/w"
	head -c 4096 /dev/urandom >"$F/data"
	for n in 10 1000 10000; do policy "$T/p$n.json" "$n"; done
	fo() { # fo CONTENDER [PREFIX...]
		local who=$1 op ns
		shift
		"$@" "$B/fileops" "$ITER" "$F/data" "$F/w" >"$T/fo.out" || { note "fileops $who failed"; return 0; }
		while read -r op ns; do emit "$op" "$who" ns "$ns"; done <"$T/fo.out"
	}
	for ((i = 0; i < R; i++)); do
		fo bare
		for n in 10 1000 10000; do fo "bpfbox-$n" "$BPFBOX" exec --policy "$T/p$n.json" "${BIG[@]}" --; done
		# An outsider while a sandbox (with the largest policy) is alive.
		"$BPFBOX" exec --policy "$T/p10000.json" "${BIG[@]}" -- sleep 600 >/dev/null 2>&1 &
		bgpid=$!
		wait_sandbox
		fo bare-beside-sandbox
		kill "$bgpid"
		wait "$bgpid" 2>/dev/null || true
	done
fi

if want work; then
	note "work: generating a git tree of $GIT_FILES files and a C project"
	G=$T/work/repo
	mkdir -p "$G"
	for ((d = 0; d < GIT_FILES / 50; d++)); do
		mkdir -p "$G/d$d"
		for ((f = 0; f < 50; f++)); do echo "file $d $f" >"$G/d$d/f$f.txt"; done
	done
	git -C "$G" init -q
	git -C "$G" add -A
	git -C "$G" -c user.name=bench -c user.email=bench@invalid commit -qm tree
	P=$T/work/proj
	mkdir -p "$P"
	objs=""
	for ((f = 0; f < 4; f++)); do
		printf '#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\nint f%d(int x) { char b[64]; snprintf(b, sizeof(b), "%%d", x); return (int)strlen(b) + atoi(b); }\n' "$f" >"$P/f$f.c"
		objs+=" f$f.o"
	done
	printf 'int main(void) { return 0; }\n' >"$P/main.c"
	# shellcheck disable=SC2016 # make's variables, not the shell's
	printf 'prog: main.o%s\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n' "$objs" >"$P/Makefile"
	PYS='import json, email.parser, http.client, asyncio, decimal, argparse, logging, sqlite3, xml.etree.ElementTree, unittest, urllib.request, subprocess, csv, zipfile, tarfile, pathlib, dataclasses, typing'
	policy "$T/pw.json" 0
	srt_settings ""
	# Warm every cache (and let python write its bytecode) before measuring.
	git -C "$G" status >/dev/null
	make -s -B -j2 -C "$P" >/dev/null
	"$PY" -c "$PYS"
	wk() { # wk TEST CMD...: the command bare and under each sandbox
		local test=$1
		shift
		sample "$test" bare "$@"
		sample "$test" bpfbox "$BPFBOX" exec --policy "$T/pw.json" -- "$@"
		((bwrap_ok)) && sample "$test" bwrap bwrap --ro-bind / / --dev /dev --proc /proc --bind "$T/work" "$T/work" -- "$@"
		((srt_ok)) && sample "$test" srt "$SRT" -s "$T/srt.json" -c "$(printf '%q ' "$@")"
		return 0
	}
	for ((i = 0; i < WORK; i++)); do
		wk git-status git -C "$G" status
		wk make-j2 make -s -B -j2 -C "$P"
		wk python-imports "$PY" -c "$PYS"
	done
fi

if want proxy; then
	note "proxy"
	if [ "${BPFBOX_BENCH_EXTERNAL:-1}" = 1 ] && [ -x "$ROOT/tools/bench-proxy.sh" ] && grep -q -- '--in-vm' "$ROOT/tools/bench-proxy.sh"; then
		# The network colleague's benchmark (curl; direct, bpfbox and tinyproxy),
		# run here in the same guest; its JSON goes into results.json as it is.
		note "tools/bench-proxy.sh --in-vm"
		if BPFBOX=$BPFBOX "$ROOT/tools/bench-proxy.sh" --in-vm --size "${BPFBOX_BENCH_PROXY_MIB:-64}" \
			--seconds "${BPFBOX_BENCH_PROXY_SECONDS:-3}" >"$T/proxy.json"; then
			echo "BENCHJSON bench-proxy $(jq -c . "$T/proxy.json")"
		else
			note "tools/bench-proxy.sh failed"
		fi
	fi
	# Our own measurement adds srt and 32 concurrent clients. Ports differ
	# from bench-proxy.sh's, in case anything of it lingers.
	"$B/httpload" serve 18181 &
	BG+=($!)
	ORIGIN=127.0.0.1:18181
	cat >"$T/tinyproxy.conf" <<CONF
Port 18989
Listen 127.0.0.1
Timeout 600
MaxClients 256
Allow 127.0.0.1
CONF
	tp_ok=0
	if command -v tinyproxy >/dev/null; then
		tinyproxy -d -c "$T/tinyproxy.conf" >/dev/null 2>&1 &
		BG+=($!)
		tp_ok=1
	fi
	policy "$T/pp.json" 0 127.0.0.1
	srt_settings 127.0.0.1
	sleep 1
	# round CONTENDER COMMAND...: COMMAND runs proxy-round.sh, whose lines
	# become samples of MB/s or requests per second.
	round() {
		local who=$1 test unit bytes requests seconds
		shift
		"$@" >"$T/round.out" 2>"$T/round.err" || note "proxy round of $who failed: $(tail -n 2 "$T/round.err")"
		while read -r test unit _ bytes _ requests _ seconds; do
			if [ "$unit" = MB/s ]; then
				emit "$test" "$who" MB/s "$(awk -v b="$bytes" -v s="$seconds" 'BEGIN { printf "%.2f", b / s / 1e6 }')"
			else
				emit "$test" "$who" req/s "$(awk -v r="$requests" -v s="$seconds" 'BEGIN { printf "%.1f", r / s }')"
			fi
		done < <(grep ' bytes ' "$T/round.out" || true)
		grep -q ' bytes ' "$T/round.out" || note "no proxy samples from $who: $(tail -n 3 "$T/round.err")"
		return 0
	}
	PR=$ROOT/tools/bench/proxy-round.sh
	# Inside a sandbox the proxy's address comes from the environment it sets.
	# shellcheck disable=SC2016 # expanded by the sandboxed shell
	IN_BPFBOX='exec "$0" "$BPFBOX_PROXY" "$1"'
	# shellcheck disable=SC2016 # expanded by the sandboxed shell
	IN_SRT='p=${HTTP_PROXY:-$http_proxy}; p=${p#http://}; p=${p%/};'
	for ((i = 0; i < PROXY_R; i++)); do
		round direct "$PR" "$ORIGIN" "$ORIGIN"
		round bpfbox "$BPFBOX" exec --policy "$T/pp.json" -- sh -c "$IN_BPFBOX" "$PR" "$ORIGIN"
		((tp_ok)) && round tinyproxy "$PR" 127.0.0.1:18989 "$ORIGIN"
		((srt_ok)) && round srt "$SRT" -s "$T/srt.json" -c "$IN_SRT exec $PR \$p $ORIGIN"
	done
fi

if want memory; then
	note "memory"
	[ -f "$T/p10000.json" ] || policy "$T/p10000.json" 10000
	policy "$T/p0.json" 0
	policy "$T/pp.json" 0 127.0.0.1
	"$BPFBOX" exec -- true
	for ((i = 0; i < R; i++)); do
		emit supervisor-rss idle KiB "$(hwm_during "$BPFBOX" exec --policy "$T/p0.json" -- sleep 2)"
		emit supervisor-rss rules-10000 KiB "$(hwm_during "$BPFBOX" exec --policy "$T/p10000.json" "${BIG[@]}" -- sleep 2)"
	done
	if want proxy; then
		for ((i = 0; i < R; i++)); do
			emit supervisor-rss proxy-round KiB "$(hwm_during "$BPFBOX" exec --policy "$T/pp.json" -- \
				sh -c "$IN_BPFBOX" "$PR" "$ORIGIN")"
		done
	fi
	# BPF memory of one sandbox: the maps it creates and the entries it adds.
	pin=$(dirname "$(find /sys/fs/bpf/bpfbox -name inode_rules | head -n 1)")
	entries() { # total entries of the shared per-rule maps
		local m t=0
		for m in inode_rules name_rules sandboxes; do
			[ -e "$pin/$m" ] && t=$((t + $(bpftool map dump pinned "$pin/$m" -j 2>/dev/null | jq length)))
		done
		echo "$t"
	}
	for n in 0 10000; do
		# An empty pool, so the sandbox's ring buffer shows up as a new map.
		"$BPFBOX" gc >/dev/null 2>&1 || true
		bpftool map show -j >"$T/maps.before"
		e0=$(entries)
		"$BPFBOX" exec --policy "$T/p$n.json" "${BIG[@]}" -- sleep 30 >/dev/null 2>&1 &
		bgpid=$!
		wait_sandbox
		sleep 2
		bpftool map show -j >"$T/maps.during"
		e1=$(entries)
		kill "$bgpid"
		wait "$bgpid" 2>/dev/null || true
		new=$(jq -n --slurpfile a "$T/maps.before" --slurpfile b "$T/maps.during" \
			'[$b[0][] | select(.id as $i | [$a[0][].id] | index($i) | not)]')
		# A ring buffer's memlock as bpftool shows it on 6.1 leaves out its data
		# pages; max_entries is their size in bytes.
		emit bpf-map-memory "rules-$n-ringbuf" KiB "$(jq '[.[] | select(.type == "ringbuf") | .max_entries] | add // 0 | . / 1024' <<<"$new")"
		emit bpf-map-memory "rules-$n-new-maps-memlock" KiB "$(jq '[.[].bytes_memlock // 0] | add // 0 | . / 1024' <<<"$new")"
		emit bpf-map-memory "rules-$n-new-maps" text "$(jq -c '[.[] | "\(.type):\(.name // "-"):\(.max_entries)"] | join(",")' <<<"$new")"
		emit bpf-map-memory "rules-$n-entries-added" count "$((e1 - e0))"
	done
	for m in inode_rules name_rules; do
		emit bpf-map-memory "$m-bytes-per-entry" B "$(bpftool map show pinned "$pin/$m" -j | jq '(.bytes_key + .bytes_value)')"
	done
fi
note "done"
