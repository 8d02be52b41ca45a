#!/usr/bin/env bash
# make demo: an "agent" runs under bpfbox with the bundled restrictive policy
# (policy-examples/agent-restrictive.json) and tries what agents should not do.
# Where this host cannot enforce BPF-LSM (bpfbox doctor says why), the same
# demo runs inside a VM on Debian's stock 6.1 kernel (tools/vm/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BPFBOX=${BPFBOX:-$PWD/build/bpfbox}

if [ "${BPFBOX_DEMO_IN_VM:-}" != 1 ] && ! "$BPFBOX" doctor >/tmp/bpfbox-demo-doctor.$$ 2>&1; then
	echo "== bpfbox doctor: this host cannot enforce a sandbox:"
	grep -E '^FAIL|fix:' /tmp/bpfbox-demo-doctor.$$ || true
	rm -f /tmp/bpfbox-demo-doctor.$$
	echo "== running the demo in a VM on Debian's stock 6.1 kernel instead"
	exec tools/vm/run.sh --kernel "${DEMO_KERNEL:-6.1}" -- env BPFBOX_DEMO_IN_VM=1 tools/demo.sh
fi
rm -f /tmp/bpfbox-demo-doctor.$$

demo=$(mktemp -d /tmp/bpfbox-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
home=$demo/home project=$demo/home/project log=$demo/events.ndjson
mkdir -p "$home/.ssh" "$project/src"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (demo)" >"$home/.ssh/id_ed25519"
echo "export PATH=\$PATH" >"$home/.bashrc"
echo 'int main(void) { return 0; }' >"$project/src/main.c"
git -C "$project" init -q
policy=$PWD/policy-examples/agent-restrictive.json

echo "== policy check $policy"
HOME=$home "$BPFBOX" policy check "$policy"

echo "== the agent's session (run under bpfbox exec; every refusal is logged to $log)"
cd "$project"
set +e
HOME=$home "$BPFBOX" exec --policy "$policy" --log-file "$log" -- bash -c '
	try() { printf "%-58s" "$1"; shift; if "$@" >/dev/null 2>&1; then echo allowed; else echo REFUSED; fi; }
	try "read the project source"                  cat src/main.c
	try "write a build artefact in the project"    sh -c "echo obj > src/main.o"
	try "read the SSH private key"                 cat ~/.ssh/id_ed25519
	try "append to ~/.bashrc"                      sh -c "echo evil >> ~/.bashrc"
	try "install a git hook"                       sh -c "echo evil > .git/hooks/pre-commit"
	try "write outside the project (/etc)"         sh -c "echo x > /etc/bpfbox-demo"
	try "write to the private TMPDIR"              sh -c "echo x > \$TMPDIR/scratch"
	try "reach a denied host through the proxy"    curl -sf --max-time 5 https://evil.example/
	try "connect directly, ignoring the proxy"     curl -sf --max-time 5 --noproxy "*" http://93.184.216.34/
	try "make a user namespace (unshare -r)"       unshare -r true
'
status=$?
set -e
echo "== bpfbox exit status: $status"
echo "== the refusals, as the observability pipeline receives them:"
jq -r 'select(.event.outcome == "failure" and .event.action != "sandbox-exit")
	| "\(.event.action)\t\(.rule.name)\t\(.file.path // .destination.domain // .destination.address // "")"' "$log" |
	column -t -s $'\t'
echo "== $(wc -l <"$log") JSON lines in the log; every one parses: $(jq -e . "$log" >/dev/null && echo yes)"
