# SPDX-License-Identifier: MIT
# pysb-bpf build. `make` builds build/pysb-bpf; `make check` runs unit tests natively and
# the end-to-end suite inside the VM (scripts/vm-run); `make demo`; `make bench`; `make fuzz`;
# `make man`; `make install` / `make uninstall` (DESTDIR, PREFIX).
# Plain `make` installs no packages: the targets that need more than a compiler (check, unit,
# e2e, demo, bench) first run scripts/deps.sh with the sets they need (build, test, bench).
OUTPUT := build
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
ARCH := x86

Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
ifeq ($(V),1)
Q =
msg =
endif

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# user/ has one folder per stage (docs/design.md, "The code"); each stage's public headers
# keep their names, so every folder is on the include path.
USER_DIRS := $(sort $(dir $(wildcard user/*/*.c user/*/*.h)))
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude $(patsubst %/,-I%,$(USER_DIRS)) -I$(OUTPUT)
# libbpf, libelf, zlib and jansson linked in (every start of `run` would otherwise load
# and relocate them); libsystemd and libmicrohttpd are opened by the daemon when it needs
# them (user/daemon/systemd_lib.c, daemon_metrics.c).
LDLIBS := -Wl,-Bstatic -lbpf -lelf -lz -ljansson -Wl,-Bdynamic -ldl -lpthread
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-parameter \
	-Iinclude -Ivmlinux

# One .bpf.c per concern, statically linked into one object (shared maps, one skeleton).
# maps.bpf.c first: the linker resolves the other files' extern maps against it.
BPF_SRCS := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(OUTPUT)/pysb.skel.h $(OUTPUT)/pysb_progs.h
USER_SRCS := $(filter-out user/cli/main.c,$(wildcard user/*/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/obj/%.o,$(USER_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/unit/%,$(UNIT_SRCS))
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
UNIT_OBJS := $(patsubst user/%.c,$(OUTPUT)/unit/obj/%.o,$(USER_SRCS))

.DELETE_ON_ERROR:
# Keep the sanitizer objects between runs of `make unit`.
.SECONDARY:
.PHONY: all deps deps-test deps-bench clean check check-kernels unit e2e e2e-kernels demo bench \
	bench-native fuzz vmlinux format format-check figures man install uninstall FORCE
all: $(OUTPUT)/pysb-bpf

# Every set (what `make deps` did before the split); the targets below ask for their own.
deps:
	$(Q)scripts/deps.sh build test bench
deps-test:
	$(Q)scripts/deps.sh build test
deps-bench:
	$(Q)scripts/deps.sh build test bench

$(OUTPUT) $(OUTPUT)/unit $(OUTPUT)/bpf $(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) include/pysb_abi.h vmlinux/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/pysb.bpf.o: $(BPF_OBJS)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/pysb.skel.h: $(OUTPUT)/pysb.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name pysb_bpf > $@

# The programs of the object as a table (a pinned instance's runs never parse the object).
$(OUTPUT)/prog_table: scripts/prog_table.c | $(OUTPUT)
	$(call msg,HOSTCC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LDLIBS) -o $@
$(OUTPUT)/pysb_progs.h: $(OUTPUT)/pysb.bpf.o $(OUTPUT)/prog_table
	$(call msg,GEN,$@)
	$(Q)$(OUTPUT)/prog_table $< > $@.tmp && mv $@.tmp $@

# Header dependencies as the compiler finds them (-MMD -MP: a .d file beside each object);
# only the files that include the skeleton wait for it (and are rebuilt when it changes).
DEPFLAGS = -MMD -MP
# (a file that includes a private header which includes the skeleton counts too)
SKEL_HDRS := $(notdir $(shell grep -l '"pysb\.skel\.h"' user/*/*.h))
empty :=
space := $(empty) $(empty)
SKEL_RE := $(subst $(space),|,$(strip pysb\.skel\.h $(SKEL_HDRS)))
SKEL_USERS := $(patsubst user/%.c,%,$(shell grep -lE '"($(SKEL_RE))"' user/*/*.c))
$(foreach u,$(SKEL_USERS),$(OUTPUT)/obj/$(u).o $(OUTPUT)/unit/obj/$(u).o): $(SKELS)
-include $(wildcard $(OUTPUT)/obj/*/*.d $(OUTPUT)/unit/obj/*/*.d $(OUTPUT)/unit/*.d)

$(OUTPUT)/obj/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/pysb-bpf: $(OUTPUT)/obj/cli/main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Unit tests: the user-side objects again, with ASan and UBSan.
$(OUTPUT)/unit/obj/%.o: user/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/unit/test_%: tests/unit/test_%.c $(UNIT_OBJS) | $(OUTPUT)/unit
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN) $(DEPFLAGS) -Itests/unit $< $(UNIT_OBJS) $(LDLIBS) -lcmocka -o $@

# The include rule of user/'s stage folders (scripts/check-layers); docs/hooks.md against
# bpf/'s programs (scripts/check-hooks). The docs' markup too (a command outside a ```console block would escape the docs test,
# tests/e2e/test_docs.sh, which runs the marked ones in the VM), and make install/uninstall
# into a scratch DESTDIR with the man page and completion they install.
unit: deps-test $(UNIT_BINS)
	$(Q)tests/e2e/lib-selftest
	$(Q)scripts/check-layers
	$(Q)scripts/check-hooks
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)scripts/doc-examples --lint README.md docs/*.md
	$(Q)tests/install-selftest
	$(Q)scripts/run-unit $(UNIT_BINS)

# Native helpers the end-to-end tests run inside the sandbox (escapes Python cannot try).
E2E_HELPERS := $(patsubst tests/e2e/helpers/%.c,$(OUTPUT)/e2e/%,$(wildcard tests/e2e/helpers/*.c))

$(OUTPUT)/e2e/%: tests/e2e/helpers/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(OUTPUT)/e2e
	$(Q)$(CC) $(CFLAGS) $< -luring -o $@

# The end-to-end suite on one kernel (6.1): the quick loop while developing.
e2e: deps-test all $(E2E_HELPERS)
	$(Q)scripts/vm-run --timeout $${PYSB_E2E_TIMEOUT:-2400} -- tests/e2e/run

# The same suite on Debian's 6.1, 6.12 and 7.2 kernels (docs/kernels.md), one VM after
# the other: a summary line per kernel, then the overall count.
e2e-kernels: deps-test all $(E2E_HELPERS)
	$(Q)scripts/e2e-matrix

# Everything built first, on every CPU (a serial build of the program and its sanitized
# twin takes a minute and a half of CI's budget), then the tests one stage after the other.
NPROC := $(shell nproc 2>/dev/null || echo 1)
check: deps-test
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all $(UNIT_BINS) $(E2E_HELPERS)
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory e2e-kernels

check-kernels: e2e-kernels

demo: deps-test all
	$(Q)scripts/demo

# Benchmark helpers: the syscall loops (and their TCP/UDP peer), a Landlock wrapper, and
# the floor of a BPF check (tests/bench/floor.bpf.c: empty programs, or one lookup each)
# with bpf_floor, which attaches them and reads the programs' run-time statistics.
BENCH_BINS := $(OUTPUT)/bench/syscall_loop $(OUTPUT)/bench/landlock_run
BENCH_BPF := $(OUTPUT)/bench/bpf_floor $(OUTPUT)/bench/floor-empty.bpf.o \
	$(OUTPUT)/bench/floor-lookup.bpf.o
$(BENCH_BINS): $(OUTPUT)/bench/%: tests/bench/%.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@
$(OUTPUT)/bench/bpf_floor: tests/bench/bpf_floor.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -lbpf -o $@
$(OUTPUT)/bench/floor-empty.bpf.o: tests/bench/floor.bpf.c vmlinux/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(OUTPUT)/bench/floor-lookup.bpf.o: tests/bench/floor.bpf.c vmlinux/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DFLOOR_LOOKUP -c $< -o $@

# make bench: parse + compile natively (bench_parse), then every other figure in ONE VM run
# (scripts/bench: pysb-bpf, bwrap, firejail side by side), raw results in build/bench-results,
# then the tables, docs/benchmarks.md and docs/bench-*.png from them (scripts/bench-report).
# Knobs: BENCH_ARGS (bench_parse's -n -r), the BENCH_* variables below (scripts/bench says
# what each does), BENCH_TIMEOUT (seconds the VM may run). The VM is the one of every
# earlier run (PYSB_VM_CPU=max, the kernel's mitigations and ASLR on, a TCG thread per
# vCPU), not the test VM's faster one (docs/vm.md, "The emulated CPU"): its figures stay
# comparable with theirs, and the event consumer runs beside its producers as on real CPUs.
# A thread per vCPU risks the emulator's stale int3 (docs/vm.md, "One TCG thread"): a run
# that dies of it is run again.
BENCH_OUT := $(OUTPUT)/bench-results
BENCH_VARS := BENCH_COUNT BENCH_ROUNDS BENCH_STARTUP_ROUNDS BENCH_EVENTS BENCH_MEM_ROUNDS \
	BENCH_FILE_RULES BENCH_NET_RULES BENCH_PORT BENCH_ONLY BENCH_HOT_ROUNDS BENCH_HOT_COUNT \
	BENCH_DEPTHS BENCH_STATS_ROUNDS
BENCH_TIMEOUT ?= 3600
bench: deps-bench all $(BENCH_BINS) $(BENCH_BPF) $(OUTPUT)/bench/bench_parse
	$(Q)rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT)
	$(Q)$(OUTPUT)/bench/bench_parse -b $(OUTPUT)/pysb-bpf $(BENCH_ARGS) >$(BENCH_OUT)/parse.txt; \
		rc=$$?; cat $(BENCH_OUT)/parse.txt; exit $$rc
	$(Q)PYSB_VM_RW_DIRS=$(abspath $(BENCH_OUT)) PYSB_VM_PASSENV="$$PYSB_VM_PASSENV $(BENCH_VARS)" \
		PYSB_VM_CPU=$${PYSB_VM_CPU:-max} PYSB_VM_MITIGATIONS=$${PYSB_VM_MITIGATIONS:-on} \
		PYSB_VM_ASLR=$${PYSB_VM_ASLR:-on} PYSB_VM_TCG_THREAD=$${PYSB_VM_TCG_THREAD:-multi} \
		scripts/vm-run --timeout $(BENCH_TIMEOUT) -- scripts/bench $(abspath $(BENCH_OUT))
	$(Q)scripts/bench-report $(BENCH_OUT) docs

# Parse + compile of a generated 10,000-rule policy on this machine (no BPF, no root):
# median/min/max time and peak RSS against the targets (100 ms, 20 MB). BENCH_ARGS: -n -r.
$(OUTPUT)/bench/bench_parse: tests/bench/bench_parse.c $(USER_OBJS) | $(OUTPUT)/bench
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(LDLIBS) -o $@

# The event dedup's table (user/events/events_dedup.c): records/s and its longest probe
# run for flood-like path shapes.
$(OUTPUT)/bench/bench_dedup: tests/bench/bench_dedup.c $(USER_OBJS) | $(OUTPUT)/bench
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(USER_OBJS) $(LDLIBS) -o $@

bench-native: all $(OUTPUT)/bench/bench_parse $(OUTPUT)/bench/bench_dedup
	$(Q)$(OUTPUT)/bench/bench_parse -b $(OUTPUT)/pysb-bpf $(BENCH_ARGS)
	$(Q)$(OUTPUT)/bench/bench_dedup

# Fuzzing the policy parser: libFuzzer + ASan + UBSan, seeded from the policy corpus;
# new inputs go to build/fuzz/corpus, crashes to build/fuzz/crash-*. Inputs are capped at
# 4 KiB (seeds are cut): a policy's structure fits, and executions are ~10x faster.
FUZZ_SECONDS ?= 600
# (the parser alone: diff.c, which writes JSON, is not part of it)
POLICY_SRCS := $(filter-out user/policy/diff.c,$(wildcard user/policy/*.c)) user/lib/strindex.c user/lib/utf8.c \
	user/lib/diag.c user/lib/log.c user/lib/secret_paths.c user/lib/untampered.c
$(OUTPUT)/fuzz/fuzz_policy: tests/fuzz/fuzz_policy.c $(POLICY_SRCS) user/policy/policy.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus
	$(Q)$(CLANG) -g -O1 $(WARN) -std=gnu11 -D_GNU_SOURCE $(patsubst %/,-I%,$(USER_DIRS)) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $< $(POLICY_SRCS) -o $@

fuzz: $(OUTPUT)/fuzz/fuzz_policy
	$(Q)$< -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=$(OUTPUT)/fuzz/ \
		-dict=tests/fuzz/policy.dict $(OUTPUT)/fuzz/corpus tests/corpus/pysandboxes

vmlinux:
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h
	$(Q)echo "Generated from /sys/kernel/btf/vmlinux of $$(uname -r) on $$(date -u +%F)" > vmlinux/SOURCE

# The figures of the docs, from their sources in docs/figures (graphviz).
FIGURES := $(patsubst %.dot,%.svg,$(wildcard docs/figures/*.dot))
figures: $(FIGURES)
docs/figures/%.svg: docs/figures/%.dot
	$(Q)scripts/deps.sh docs
	$(call msg,DOT,$@)
	$(Q)dot -Tsvg $< -o $@

C_FORMATTED = bpf/*.c bpf/*.h include/*.h user/*/*.c user/*/*.h tests/unit/*.c tests/unit/*.h
format:
	$(Q)clang-format -i $(C_FORMATTED)
format-check:
	$(Q)clang-format --dry-run --Werror $(C_FORMATTED) && echo "format: every C file as .clang-format has it"

clean:
	$(Q)rm -rf $(OUTPUT)

# make install [DESTDIR=...] [PREFIX=/usr/local]: the binary, its man page (make man), bash
# completion, the daemon's systemd unit, /etc/pysb-bpf for its bindings, the documentation.
# make uninstall [DESTDIR=...] [PREFIX=...] removes them again, except /etc/pysb-bpf when it
# holds bindings. Each directory can be moved alone (BINDIR=, MANDIR=, ...).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/pysb-bpf
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
SYSTEMD_UNIT_DIR ?= /etc/systemd/system

# The man page names DOCDIR: rebuilt when it changes.
$(OUTPUT)/docdir: FORCE | $(OUTPUT)
	$(Q)echo '$(DOCDIR)' | cmp -s - $@ || echo '$(DOCDIR)' >$@

# help2man, from the binary's own help (scripts/mkman says why).
$(OUTPUT)/pysb-bpf.1: $(OUTPUT)/pysb-bpf scripts/mkman $(OUTPUT)/docdir
	$(call msg,MAN,$@)
	$(Q)scripts/mkman $(OUTPUT)/pysb-bpf $@ '$(DOCDIR)'

man: $(OUTPUT)/pysb-bpf.1

$(OUTPUT)/pysb-bpf.service: dist/pysb-bpf.service FORCE | $(OUTPUT)
	$(Q)sed 's|@BINDIR@|$(BINDIR)|g' $< >$@

install: $(OUTPUT)/pysb-bpf $(OUTPUT)/pysb-bpf.1 $(OUTPUT)/pysb-bpf.service
	install -D -m 0755 $(OUTPUT)/pysb-bpf $(DESTDIR)$(BINDIR)/pysb-bpf
	install -D -m 0644 $(OUTPUT)/pysb-bpf.1 $(DESTDIR)$(MANDIR)/man1/pysb-bpf.1
	install -D -m 0644 dist/pysb-bpf.bash $(DESTDIR)$(BASHCOMPDIR)/pysb-bpf
	install -D -m 0644 $(OUTPUT)/pysb-bpf.service $(DESTDIR)$(SYSTEMD_UNIT_DIR)/pysb-bpf.service
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/pysb-bpf $(DESTDIR)$(DOCDIR)
	install -m 0644 README.md CHANGELOG.md docs/*.md docs/*.png $(DESTDIR)$(DOCDIR)/
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl daemon-reload; \
		echo "installed; start it with: systemctl enable --now pysb-bpf"; fi

uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl disable --now pysb-bpf 2>/dev/null || true; fi
	rm -f $(DESTDIR)$(BINDIR)/pysb-bpf $(DESTDIR)$(MANDIR)/man1/pysb-bpf.1 \
		$(DESTDIR)$(BASHCOMPDIR)/pysb-bpf $(DESTDIR)$(SYSTEMD_UNIT_DIR)/pysb-bpf.service
	rm -rf $(DESTDIR)$(DOCDIR)
	@rmdir $(DESTDIR)$(SYSCONFDIR)/pysb-bpf 2>/dev/null || \
		[ ! -d $(DESTDIR)$(SYSCONFDIR)/pysb-bpf ] || \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/pysb-bpf: it holds bindings; remove it by hand"
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl daemon-reload; fi

FORCE:
