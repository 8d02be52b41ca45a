#!/bin/bash
# Install the pinned coding-agent CLIs from the npm registry into build/agents/<name>/,
# once: a complete install (its stamp file present) is reused. Each CLI's native binary
# comes from an npm-hosted platform package (an optional dependency); nothing is fetched
# from any other host.
#
#   tools/agents/install.sh [DEST]      (default: build/agents)
set -euo pipefail

# Pinned versions: bump together with docs/agents.md.
AGENTS=(
	"claude-code @anthropic-ai/claude-code@2.1.332"
	"codex @openai/codex@0.171.0"
	"opencode opencode-ai@1.18.33"
)

root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$root/build/agents}
registry=$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)

die() { echo "agents: $*" >&2; exit 1; }

command -v npm >/dev/null || die "npm is not installed (apt-get install npm)"

need=()
for a in "${AGENTS[@]}"; do
	read -r name spec <<<"$a"
	stamp=$dest/$name/.installed
	[[ -f $stamp && $(cat "$stamp") == "$spec" ]] || need+=("$a")
done
if ((${#need[@]} == 0)); then
	echo "agents: up to date in $dest"
	exit 0
fi

if ! npm ping --fetch-timeout=15000 --fetch-retries=0 >/dev/null 2>&1; then
	die "cannot reach the npm registry ($registry) to install ${need[*]//@*/...}; the agent tests (tests/vm/test_80_agents.sh) need it once, later runs reuse $dest"
fi

# What the installs and their postinstall scripts put in a temporary directory stays in
# build/ and goes with it (opencode's left /tmp/opencode behind).
export TMPDIR=$dest/.tmp
mkdir -p "$TMPDIR"
trap 'rm -rf "$TMPDIR"' EXIT
for a in "${need[@]}"; do
	read -r name spec <<<"$a"
	dir=$dest/$name
	echo "agents: installing $spec into $dir"
	rm -rf "$dir"
	mkdir -p "$dir"
	# --os/--cpu pick the linux-x64 platform package whatever the host; --foreground-scripts
	# shows what a postinstall does. No audit, no funding, no update notice.
	if ! npm install --prefix "$dir" --no-audit --no-fund --no-update-notifier \
		--os=linux --cpu=x64 --libc=glibc --fetch-timeout=60000 --fetch-retries=2 \
		--foreground-scripts "$spec" >"$dir/install.log" 2>&1; then
		tail -n 30 "$dir/install.log" >&2
		die "npm install $spec failed (log: $dir/install.log)"
	fi
	echo "$spec" >"$dir/.installed"
done
echo "agents: installed in $dest"
