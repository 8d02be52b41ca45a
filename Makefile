# bpfbox build. Everything comes from Debian packages (see `make deps`).
SHELL := /bin/bash
BUILD ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := x86

CFLAGS ?= -O2 -g
# Sanitizer builds (build/asan, build/fuzz) add their flags here; the shipped build has none.
SAN_FLAGS ?=
CFLAGS += $(SAN_FLAGS) -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-format-truncation \
	  -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD) $(shell pkg-config --cflags libcjson 2>/dev/null)
LDLIBS += -lbpf -lelf -lz -lcjson -lpthread -ldl
# bpfbox loads OpenSSL when a feature needs it (user/lib/openssl_lazy.h); tests call it directly.
OPENSSL_LIBS := -lssl -lcrypto
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -Ibpf \
	      -I/usr/include/$(shell uname -m)-linux-gnu \
	      -Wall -Werror -Wno-unused-function

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
DIGESTS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.digest.h,$(BPF_SRCS))
# user/ is one folder per subsystem (docs/architecture.md); headers sit beside their sources.
USER_SRCS := $(wildcard user/*/*.c)
USER_HDRS := $(wildcard include/*.h user/*/*.h)
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
LIB_OBJS := $(filter-out $(BUILD)/user/cli/main.o,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
KERNELS ?= 6.1 6.12
# The one place the version lives: bpfbox --version, the man pages and the .deb read it.
VERSION := $(shell cat VERSION)

.SECONDARY:
.PHONY: all deps agents agents-test console console-test unit-test asan-unit-test fuzzers fuzz-build fuzz fuzz-short soak vm-test test \
	demo bench clean man deb docs-check units-check
HELPERS := $(patsubst tests/vm/helpers/%.c,$(BUILD)/helpers/%,$(wildcard tests/vm/helpers/*.c))
all: $(BUILD)/bpfbox $(HELPERS)

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h bpf/lib/*.h include/*.h) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# The object's name for its pins (bpf_state.c): its digest, taken here once rather than at every start.
$(BUILD)/%.digest.h: $(BUILD)/%.bpf.o
	d=$$(sha256sum $< | cut -c1-16) && [ $${#d} -eq 16 ] && \
		printf '#define BPFBOX_BPF_DIGEST "%s"\n' "$$d" > $@.tmp && mv $@.tmp $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) $(SKELS) $(DIGESTS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/user/cli/main.o: CFLAGS += -DBPFBOX_VERSION='"$(VERSION)"'
$(BUILD)/user/cli/main.o: VERSION

$(BUILD)/bpfbox: $(USER_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/helpers/%: tests/vm/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS) $(OPENSSL_LIBS) -lcmocka

# A fresh machine learns here which packages a build lacks, not from a compiler error.
$(BUILD):
	tools/check-build-deps.sh
	mkdir -p $(BUILD)

# Man pages, with pandoc, from markdown in the tree (docs/man/): bpfbox(8) from its own source,
# bpfbox-policy(5) from docs/policy.md itself, so no field can be missing from it.
PANDOC_MAN := pandoc -s -t man --lua-filter=docs/man/links-to-text.lua \
	-M footer="bpfbox $(VERSION)" -M header="bpfbox manual"
# Left-aligned, not justified (narrow table columns cannot be justified), and pandoc's table
# widths (70n, plus the gaps) scaled to fit an 80-column terminal.
MAN_FIT := perl -pe 's/^(\.TH .*)$$/$$1\n.ad l/; s/lw\(([\d.]+)n\)/sprintf("lw(%.1fn)", $$1 * 0.8)/ge'
MAN_PAGES := $(BUILD)/man/bpfbox.8 $(BUILD)/man/bpfbox-policy.5
man: $(MAN_PAGES)

$(BUILD)/man/bpfbox.8: docs/man/bpfbox.8.md docs/man/links-to-text.lua VERSION
	@mkdir -p $(dir $@)
	$(PANDOC_MAN) -M title=BPFBOX -M section=8 $< | $(MAN_FIT) >$@

$(BUILD)/man/bpfbox-policy.5: docs/man/bpfbox-policy.5.md docs/policy.md docs/man/links-to-text.lua VERSION
	@mkdir -p $(dir $@)
	{ cat $<; echo; sed 1d docs/policy.md; } | \
		$(PANDOC_MAN) -f markdown --shift-heading-level-by=-1 -M title=BPFBOX-POLICY -M section=5 | \
		$(MAN_FIT) >$@

# The Debian package: tools/packaging/ is copied into a build directory with the tree
# (tools/packaging/build-deb.sh); dpkg-buildpackage builds it there. Then its postinst is
# run against stubs: a host whose doctor fails gets nothing enabled or started.
deb:
	tools/packaging/build-deb.sh $(BUILD)
	tests/check-postinst.sh $(BUILD)

# Every option `bpfbox COMMAND --help` prints is in bpfbox.8.md, every policy field of
# docs/policy.md in the generated bpfbox-policy(5); systemd-analyze accepts the units; the
# tree keeps the structure docs/architecture.md describes (tools/check-structure.py).
docs-check: $(BUILD)/bpfbox $(MAN_PAGES)
	tests/check-docs.sh $(BUILD)
	tools/check-structure.py $(BUILD)

units-check: $(BUILD)/bpfbox
	tests/check-units.sh $(BUILD)

# Sanitized builds of the same user/ sources, each in its own directory, never shipped:
# the cmocka suites under ASan+UBSan, and one libFuzzer binary per tests/fuzz/fuzz_*.c.
ASAN_DIR ?= build/asan
FUZZ_DIR ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SHORT_SECONDS ?= 5
SANITIZE := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

$(BUILD)/fuzzers/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $< $(LIB_OBJS) -o $@ $(LDLIBS) $(OPENSSL_LIBS)

fuzzers: $(patsubst %,$(BUILD)/fuzzers/fuzz_%,$(FUZZ_TARGETS))

asan-unit-test:
	$(MAKE) BUILD=$(ASAN_DIR) SAN_FLAGS="$(SANITIZE)" unit-test

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_DIR) CC=$(CLANG) \
		SAN_FLAGS="$(SANITIZE) -fsanitize=fuzzer-no-link -Wno-unknown-warning-option" fuzzers

# `make fuzz` also checks `policy explain` against the kernel on a fresh seed (test_48, 2000
# paths; the seed is printed, BPFBOX_DIFF_SEED repeats a run); `make test` runs 200 on a fixed one.
fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
	$(MAKE) $(BUILD)/bpfbox && BPFBOX_DIFF_CASES=$${BPFBOX_DIFF_CASES:-2000} BPFBOX_DIFF_SEED=$${BPFBOX_DIFF_SEED:-$$(date +%s)} BPFBOX_TEST_FILTER=test_48_fs_differential BPFBOX_TEST_TIMEOUT=3000 tools/vm/run.sh --kernel $(lastword $(KERNELS)) --timeout 3600 -- tests/vm/run-all.sh

fuzz-short: fuzz-build
	tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SHORT_SECONDS) $(FUZZ_TARGETS)

# The long soak (tests/vm/test_90_soak.sh; make test runs its short version).
SOAK_RUNS ?= 1000
soak: $(BUILD)/bpfbox
	@set -e; for k in $(KERNELS); do \
		echo "== soak ($(SOAK_RUNS) runs) on Debian kernel $$k"; \
		BPFBOX_TEST_SOAK_RUNS=$(SOAK_RUNS) BPFBOX_TEST_FILTER=test_90_soak \
		BPFBOX_TEST_TIMEOUT=$${BPFBOX_TEST_TIMEOUT:-10000} \
			tools/vm/run.sh --kernel $$k --timeout 10800 -- tests/vm/run-all.sh; \
	done

deps:
	tools/install-deps.sh

unit-test: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# Both kernels at once: a TCG guest keeps about one core busy, so two guests on the 2-core
# machine take little longer than one (each guest's two vCPUs on one host thread there:
# tools/vm/run.sh --guests). Each kernel's log is printed whole when both end.
# The Nth kernel of KERNELS gets BPFBOX_KERNEL_SHARE=N/<count>: the cases whose subject is
# user space run on one kernel only (tests/vm/lib.sh t_share, docs/vm.md). With
# BPFBOX_TEST_FILTER, or BPFBOX_KERNEL_SHARE= (empty), every case runs on every kernel.
vm-test: $(BUILD)/bpfbox agents console
	@set -u; pids=(); s=0; for k in $(KERNELS); do s=$$((s + 1)); share=$$s/$(words $(KERNELS)); \
		[ -z "$${BPFBOX_TEST_FILTER-}" ] || share=; \
		echo "== VM tests on Debian kernel $$k (log: $(BUILD)/vm-test-$$k.log)"; \
		BPFBOX_KERNEL_SHARE=$${BPFBOX_KERNEL_SHARE-$$share} BPFBOX_KERNELS="$(KERNELS)" \
		BPFBOX_TEST_TIMEOUT=$${BPFBOX_TEST_TIMEOUT:-1800} tools/vm/run.sh --kernel $$k --timeout 4800 \
			--guests $(words $(KERNELS)) -- tests/vm/run-all.sh >$(BUILD)/vm-test-$$k.log 2>&1 & pids+=($$!); \
	done; \
	rc=0; i=0; for k in $(KERNELS); do \
		wait $${pids[$$i]} || rc=1; i=$$((i + 1)); \
		echo "== VM tests on Debian kernel $$k"; cat $(BUILD)/vm-test-$$k.log; \
	done; \
	exit $$rc

# The Cockpit page (console/) into build/console/share/cockpit/bpfbox: its React and
# PatternFly React sources (console/src) bundled by esbuild, all from the npm packages pinned
# in console/package-lock.json; and its browser test:
# the real Cockpit serving the page of the built bpfbox-cockpit package (make deb; else the
# page built here) and Debian's Chromium on the host, in a mount namespace (docs/console.md).
console:
	tools/console/build.sh $(BUILD)/console

console-test: $(BUILD)/bpfbox console
	tests/console/run.sh $(BUILD)

# The coding-agent CLIs that tests/vm/test_80_agents.sh drives, from the npm registry into
# build/agents/ (once; later runs reuse them).
agents:
	tools/agents/install.sh $(BUILD)/agents

# The real agents alone, each confined and unconfined on both kernels (`make test` runs
# them too, with each unconfined control on one kernel only: docs/agents.md).
agents-test: $(BUILD)/bpfbox agents
	@set -e; for k in $(KERNELS); do \
		echo "== agent sessions on Debian kernel $$k"; \
		BPFBOX_TEST_FILTER=test_80_agents BPFBOX_AGENTS_UNCONFINED=$${BPFBOX_AGENTS_UNCONFINED:-all} \
		BPFBOX_AGENTS_CONFINED=$${BPFBOX_AGENTS_CONFINED:-all} \
		BPFBOX_TEST_TIMEOUT=$${BPFBOX_TEST_TIMEOUT:-1800} \
			tools/vm/run.sh --kernel $$k --timeout 4800 -- tests/vm/run-all.sh; \
	done

# Each step's start time is printed: where the budget goes (docs/vm.md, Timing).
test: deps
	@echo "== make test: all at $$(date -u +%T)"
	$(MAKE) all
	@echo "== make test: unit-test at $$(date -u +%T)"
	$(MAKE) unit-test
	@echo "== make test: docs-check at $$(date -u +%T)"
	$(MAKE) docs-check
	@echo "== make test: units-check at $$(date -u +%T)"
	$(MAKE) units-check
	@echo "== make test: asan-unit-test at $$(date -u +%T)"
	$(MAKE) asan-unit-test
	@echo "== make test: fuzz-short at $$(date -u +%T)"
	$(MAKE) fuzz-short
	@echo "== make test: deb at $$(date -u +%T)"
	$(MAKE) deb
	@echo "== make test: console-test at $$(date -u +%T)"
	$(MAKE) console-test
	@echo "== make test: vm-test at $$(date -u +%T)"
	$(MAKE) vm-test
	@echo "== make test: done at $$(date -u +%T)"

demo: deps
	$(MAKE) all
	tools/demo.sh

bench: deps
	$(MAKE) all
	tools/bench.sh

clean:
	rm -rf $(BUILD)
