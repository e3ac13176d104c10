# iolens: build, test, install.  `make`, `make check`, `make check SANITIZE=1`, `make check-kernels`,
# `make deps` (what the build needs), `make test-deps` (and what the tests need).

# Built with a job per CPU unless a -j was given (`make check` in CI builds twice, plain and sanitized).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DESTDIR    ?=
PKG_CONFIG ?= pkg-config
CC         ?= cc
CLANG      ?= clang

# Links that run a subcommand by their name (make install-links).
LINKS := pcstat vstat dstat cachestat cachetop
# Links installed only where no other tool of the name is found in PATH (sysstat's iostat).
LINKS_BESIDE := iostat

PKGS := smartcols json-c liburing blkid ncursesw libmicrohttpd zlib yaml-0.1 libcrypt gnutls

# Debian packages, installed by tools/deps.sh with apt-get (only those missing; nothing said when all
# are there). make deps: what `make` and `./iolens doctor` need: the compiler, the libraries, and
# clang, bpftool and libbpf for the eBPF programs.
DEPS_PACKAGES := gcc make pkg-config libc6-dev libsmartcols-dev libjson-c-dev libbpf-dev libelf-dev \
                 zlib1g-dev bpftool clang liburing-dev libblkid-dev libncurses-dev libmicrohttpd-dev \
                 libyaml-dev libcrypt-dev libgnutls28-dev
# make test-deps: those and what make check, make check-kernels and make fuzz need: cmocka, libFuzzer's
# runtime, libfuse3 (the FUSE example); the peer tools the tests compare with (fio, vmtouch, sysstat's
# iostat, dstat, util-linux's fincore, Prometheus's promtool and server, node_exporter), bpftrace (it
# times block requests on the same tracepoints as iolens: tests/cli/block_latency.py); what the tests
# drive (procps's sysctl, pgrep and ps, iproute2's ip, strace, systemd-analyze, curl, openssl, GNU
# time, groff, man, python3, mkfs.ext4, mkfs.btrfs: a disk's filesystem doctor asks in a child;
# atop and sadc beside iolens record in bench/); qemu, a
# static busybox, cpio, kmod and the decompressors that boot other kernels for make check-kernels (Debian's keyring checks the archive of one this
# machine's apt does not list: 5.10).
TEST_PACKAGES := libcmocka-dev libclang-rt-14-dev libfuse3-dev fuse3 util-linux mount procps iproute2 \
                 strace systemd curl openssl time python3 groff-base man-db e2fsprogs btrfs-progs xfsprogs fio vmtouch \
                 sysstat atop dstat bpftrace prometheus prometheus-node-exporter qemu-system-x86 \
                 busybox-static cpio kmod xz-utils zstd debian-archive-keyring
# Those of them that ship a server, a collector or a daemon: when test-deps installs them, none is
# started, and their units and init scripts are disabled (tools/deps.sh). The tests run them.
TEST_SERVERS  := prometheus prometheus-node-exporter sysstat atop fio vmtouch

# make deps and make test-deps run before the compiler and pkg-config are there: the $(shell ...)s
# that ask them are left out when those are the only goals.
ONLY_DEPS := $(if $(MAKECMDGOALS),$(if $(filter-out deps test-deps,$(MAKECMDGOALS)),,yes))

ifeq ($(SANITIZE),1)
BUILD     := build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
IOLENS    := $(BUILD)/iolens
else
BUILD     := build
SAN_FLAGS :=
IOLENS    := iolens
endif

CFLAGS    ?= -O2 -g
WARNINGS  := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes
ifneq ($(ONLY_DEPS),yes)
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lm

# Libraries iolens opens with dlopen when the subcommand that needs them runs (src/common/dl.h),
# not linked, so that every other start-up does not load them (libmicrohttpd brings gnutls and 9
# more). Their sonames come from the file that pkg-config's first -lNAME would link.
# (A libNAME.so that is a linker script, as ncursesw's INPUT(libncursesw.so.6 -ltinfo): its first file.)
DL_PKGS := libmicrohttpd yaml-0.1 libcrypt gnutls ncursesw liburing blkid zlib json-c
soname = $(shell l=$$($(PKG_CONFIG) --libs-only-l $(1) 2>/dev/null | sed 's/^ *-l\([^ ]*\).*/\1/'); \
	f=$$($(PKG_CONFIG) --variable=libdir $(1) 2>/dev/null)/lib$$l.so; \
	[ -e "$$f" ] || f=$$($(CC) -print-file-name=lib$$l.so); \
	readelf -h "$$f" >/dev/null 2>&1 || { s=$$(sed -n 's/^[[:space:]]*\(INPUT\|GROUP\)[[:space:]]*([[:space:]]*\([^[:space:])]*\).*/\2/p' "$$f" 2>/dev/null | head -1); \
		case $$s in (/*) f=$$s ;; (*) f=$$(dirname "$$f")/$$s ;; esac; }; \
	readelf -d "$$f" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
DL_CPPFLAGS := -DMHD_SONAME='"$(call soname,libmicrohttpd)"' -DYAML_SONAME='"$(call soname,yaml-0.1)"' \
	       -DCRYPT_SONAME='"$(call soname,libcrypt)"' -DCURSES_SONAME='"$(call soname,ncursesw)"' \
	       -DURING_SONAME='"$(call soname,liburing)"' -DBLKID_SONAME='"$(call soname,blkid)"' \
	       -DGNUTLS_SONAME='"$(call soname,gnutls)"' -DZLIB_SONAME='"$(call soname,zlib)"' \
	       -DJSONC_SONAME='"$(call soname,json-c)"'
# What iolens links: all but those (unit tests, helpers and fuzz targets link them all), and not
# libm either: src/common/libm.c has the five functions iolens uses (libm's ifunc resolvers cost
# every start-up), json-c and zlib come through src/render/json_dl.c and src/http/http.c. Only
# libsmartcols and libc are left to load at start, as for util-linux's fincore.
IOLENS_LIBS = $(filter-out -lm $(shell $(PKG_CONFIG) --libs-only-l $(DL_PKGS) 2>/dev/null),$(PKG_LIBS))

# eBPF programs (src/bpf/*.bpf.c), compiled with clang against the running kernel's BTF and
# turned into skeletons with bpftool; without those tools the collectors report eBPF as missing.
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
BPF_ARCH := $(shell uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')
HAVE_BPF := $(shell test -r /sys/kernel/btf/vmlinux && test -x $(BPFTOOL) && $(PKG_CONFIG) --exists libbpf && \
                    command -v $(CLANG) >/dev/null && echo yes)
BPF_SRC := $(sort $(wildcard src/bpf/*.bpf.c))
# Those that keep per-thread state are built twice: the second for kernels before 5.11 (src/bpf/compat.h).
BPF_COMPAT := cachestat odirect
BPF_SKEL := $(BPF_SRC:src/bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h) $(BPF_COMPAT:%=$(BUILD)/bpf/%_compat.skel.h)
ifeq ($(HAVE_BPF),yes)
# libbpf too is opened when a collector loads a program (src/collect/bpf_dl.h), not linked.
PKG_CFLAGS += -DIOLENS_BPF -I$(BUILD)/bpf $(shell $(PKG_CONFIG) --cflags libbpf)
PKG_LIBS += $(shell $(PKG_CONFIG) --libs libbpf)
DL_PKGS += libbpf
DL_CPPFLAGS += -DBPF_SONAME='"$(call soname,libbpf)"'
endif

endif

ALL_CPPFLAGS := -D_GNU_SOURCE -DIOLENS_VERSION='"$(VERSION)"' $(DL_CPPFLAGS) -Isrc -Iinclude -Ilib -I$(BUILD)/gen $(CPPFLAGS)
ALL_CFLAGS   := -std=gnu11 $(WARNINGS) $(SAN_FLAGS) $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS  := $(SAN_FLAGS) $(LDFLAGS)

# libvtrace: libc only, position-independent, only the API in include/vtrace.h exported.
VTRACE_SRC := $(sort $(wildcard lib/vtrace/*.c))
VTRACE_OBJ := $(VTRACE_SRC:%.c=$(BUILD)/%.o)
VTRACE_SONAME := libvtrace.so.1
VTRACE_CFLAGS := -std=gnu11 $(WARNINGS) $(SAN_FLAGS) -fPIC -fvisibility=hidden -pthread $(CFLAGS)

MAIN_SRC := src/iolens.c
LIB_SRC  := $(sort $(wildcard src/common/*.c src/collect/*.c src/store/*.c src/model/*.c src/render/*.c src/http/*.c src/workload/*.c src/doctor/*.c \
	    src/doctor/rules/*.c src/cmd/*.c src/cmd/export/*.c src/cmd/stat/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(BUILD)/%.o)

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)

# Parts registered by adding a file: $(call registry,NAME,DIR) writes $(BUILD)/gen/NAME.h, the
# X-macro NAME(X) naming every DIR/x.c as X(x), sorted (rewritten only when the list changes, so
# adding or removing a file rebuilds what includes it and nothing else).
hash := \#
registry = $(shell mkdir -p $(BUILD)/gen && f=$(BUILD)/gen/$(1).h && \
	new=$$(printf '%s\n' '/* Made by the Makefile from the files of $(2)/: add a file there. */' \
	      '$(hash)define $(1)(X)$(foreach x,$(sort $(basename $(notdir $(wildcard $(2)/*.c)))), X($(x)))') && \
	{ [ "$$(cat $$f 2>/dev/null)" = "$$new" ] || printf '%s\n' "$$new" > $$f; })
$(call registry,doctor_rules,src/doctor/rules)
$(call registry,export_collectors,src/cmd/export)
$(call registry,stat_groups,src/cmd/stat)

MAN_PAGES := $(sort $(wildcard docs/*.1))
MAN3_PAGES := $(sort $(wildcard docs/*.3))

.PHONY: all check unit-tests fuzz install install-links uninstall deps test-deps clean libvtrace
all: $(IOLENS) libvtrace

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/lib/vtrace/%.o: lib/vtrace/%.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -DVTRACE_BUILD -Iinclude -Ilib/vtrace $(CPPFLAGS) $(VTRACE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libvtrace.a: $(VTRACE_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/$(VTRACE_SONAME): $(VTRACE_OBJ)
	$(CC) -shared -pthread -Wl,-soname,$(VTRACE_SONAME) $(ALL_LDFLAGS) -o $@ $^
	ln -sf $(VTRACE_SONAME) $(BUILD)/libvtrace.so

PC_SED := s|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|

$(BUILD)/vtrace.pc: lib/vtrace/vtrace.pc.in
	sed -e '$(PC_SED)' $< > $@
# For a server built against this tree, not installed: PKG_CONFIG_PATH=build pkg-config ... vtrace
# finds it before vtrace.pc (pkg-config prefers NAME-uninstalled.pc).
$(BUILD)/vtrace-uninstalled.pc: lib/vtrace/vtrace.pc.in
	sed -e 's|@PREFIX@|$(abspath .)|; s|@VERSION@|$(VERSION)|; s|@LIBDIR@|$(abspath $(BUILD))|; s|@INCLUDEDIR@|$(abspath include)|' $< > $@

libvtrace: $(BUILD)/libvtrace.a $(BUILD)/$(VTRACE_SONAME) $(BUILD)/vtrace.pc $(BUILD)/vtrace-uninstalled.pc

$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: src/bpf/%.bpf.c $(BUILD)/bpf/vmlinux.h $(wildcard src/bpf/*.h)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -I$(BUILD)/bpf -c $< -o $@

$(BUILD)/bpf/%_compat.bpf.o: src/bpf/%.bpf.c $(BUILD)/bpf/vmlinux.h $(wildcard src/bpf/*.h)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -DIOLENS_BPF_COMPAT -I$(BUILD)/bpf -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# The libbpf functions called, listed once: each made a pointer (bpf_dl.h), and the list ebpf_init resolves.
$(BUILD)/bpf/libbpf_syms.h: src/collect/libbpf.syms
	@mkdir -p $(dir $@)
	{ echo '/* Made by the Makefile from src/collect/libbpf.syms: edit that list. */'; \
	  sed -n 's/^\([a-z_][a-z0-9_]*\)$$/#define \1 (*sym_\1)/p' $<; \
	  printf '#define LIBBPF_SYMS(X)'; \
	  sed -n 's/^\([a-z_][a-z0-9_]*\)$$/ X(sym_\1, "\1")/p' $< | tr -d '\n'; echo; } > $@

ifeq ($(HAVE_BPF),yes)
$(LIB_OBJ): $(BPF_SKEL) $(BUILD)/bpf/libbpf_syms.h
endif

$(BUILD)/libiolens.a: $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(IOLENS): $(MAIN_OBJ) $(BUILD)/libiolens.a $(BUILD)/libvtrace.a | libvtrace
	$(CC) $(ALL_LDFLAGS) -pthread -o $@ $(MAIN_OBJ) $(BUILD)/libiolens.a $(BUILD)/libvtrace.a $(IOLENS_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libiolens.a $(BUILD)/libvtrace.a tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Ilib/vtrace $(shell $(PKG_CONFIG) --cflags cmocka) \
	    $(ALL_LDFLAGS) -pthread -o $@ $< $(BUILD)/libiolens.a $(BUILD)/libvtrace.a $(PKG_LIBS) \
	    $(shell $(PKG_CONFIG) --libs cmocka)

unit-tests: $(UNIT_BIN)

# Programs the command tests drive: a scriptable libvtrace server, a forger of hostile segments,
# an O_DIRECT service's reader.
HELPER_BIN := $(BUILD)/tests/helpers/vtload $(BUILD)/tests/helpers/vtforge $(BUILD)/tests/helpers/odirect_reader \
	      $(BUILD)/tests/helpers/cachepattern $(BUILD)/tests/helpers/bcrypt_hash $(BUILD)/tests/helpers/uring_open
# cachepattern is the workload whose page-cache accesses the tests count: never built with the
# sanitizers, whose runtime would read and map pages of its own after the cue.
$(BUILD)/tests/helpers/cachepattern: tests/helpers/cachepattern.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE $(CPPFLAGS) -std=gnu11 $(WARNINGS) $(CFLAGS) -pthread -o $@ $<
# bcrypt_hash: bcrypt hashes for export's basic-auth tests, with libxcrypt (as export checks them).
$(BUILD)/tests/helpers/bcrypt_hash: tests/helpers/bcrypt_hash.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARNINGS) $(SAN_FLAGS) $(CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lcrypt
# uring_open: O_DIRECT opens through io_uring (IORING_OP_OPENAT), with liburing; never sanitized (the
# tests run it under strace, where LeakSanitizer cannot run).
$(BUILD)/tests/helpers/uring_open: tests/helpers/uring_open.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE $(CPPFLAGS) -std=gnu11 $(WARNINGS) $(CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	    $(shell $(PKG_CONFIG) --cflags --libs liburing)
$(BUILD)/tests/helpers/%: tests/helpers/%.c $(BUILD)/libvtrace.a
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -Iinclude -Ilib/vtrace $(CPPFLAGS) -std=gnu11 $(WARNINGS) $(SAN_FLAGS) $(CFLAGS) $(ALL_LDFLAGS) \
	    -pthread -o $@ $< $(BUILD)/libvtrace.a

# diskext: a collector's iostat -x figures for tests/cli/diskstats_vs_iostat.sh; monfmt: the
# monitor's number formatting for tests/cli/monitor_format.sh; restamp: a store copied with its
# stamps moved, for tests/cli/record_gaps.sh; taskrows: the task iterator beside /proc, for
# tests/cli/task_iter.sh; fsprobe: a mount asked in place or left to a child, for
# tests/cli/doctor_prjquota.sh. They link libiolens too.
LIB_HELPERS := $(addprefix $(BUILD)/tests/helpers/,diskext monfmt restamp taskrows fsprobe)
HELPER_BIN += $(LIB_HELPERS)
$(LIB_HELPERS): $(BUILD)/tests/helpers/%: tests/helpers/%.c $(BUILD)/libiolens.a $(BUILD)/libvtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -pthread -o $@ $< $(BUILD)/libiolens.a $(BUILD)/libvtrace.a $(PKG_LIBS)

# libFuzzer targets: the sources compiled once with the fuzzer's instrumentation (an archive the
# targets share), each target linking the parsers it feeds from it.
FUZZ_CFLAGS := $(ALL_CPPFLAGS) -DVTRACE_BUILD -Ilib/vtrace -std=gnu11 -g -O1 $(PKG_CFLAGS)
FUZZ_OBJ := $(patsubst %.c,build-fuzz/obj/%.o,$(LIB_SRC) $(VTRACE_SRC))
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
ifeq ($(HAVE_BPF),yes)
$(FUZZ_OBJ): $(BPF_SKEL) $(BUILD)/bpf/libbpf_syms.h
endif
build-fuzz/libfuzzed.a: $(FUZZ_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c build-fuzz/libfuzzed.a
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -pthread -o $@ $< build-fuzz/libfuzzed.a $(PKG_LIBS)
-include $(FUZZ_OBJ:.o=.d)

fuzz: $(FUZZ_BIN)

# What libvtrace costs per request, against two clock reads and a mutex; bench/vtrace-overhead.sh runs it.
# What a row of a monitor's lines costs in each format; bench/json-lines.sh runs it.
.PHONY: bench
bench: $(BUILD)/bench/vtrace-overhead $(BUILD)/bench/json-lines

$(BUILD)/bench/vtrace-overhead: bench/vtrace-overhead.c include/vtrace.h $(BUILD)/libvtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -pthread -o $@ $< $(BUILD)/libvtrace.a

$(BUILD)/bench/json-lines: bench/json-lines.c src/render/out.h $(BUILD)/libiolens.a $(BUILD)/libvtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -pthread -o $@ $< $(BUILD)/libiolens.a $(BUILD)/libvtrace.a $(PKG_LIBS)

# BUSY=1: with a CPU hog on each core (tests/busy), as on a machine that is busy.
check: $(IOLENS) $(UNIT_BIN) $(HELPER_BIN)
	@IOLENS=$(abspath $(IOLENS)) BUILD=$(abspath $(BUILD)) SANITIZE=$(SANITIZE) \
	    CLANG=$(CLANG) MAKE="$(MAKE)" $(if $(filter 1,$(BUSY)),tests/busy) tests/run

# The eBPF tests in other kernels, booted in qemu with the host's / shared read-only (tests/kernels/):
# Debian's packages of each series, downloaded into build/kernels/ the first time (Debian 11's 5.10
# through an apt configuration of its own, build/kernels/apt/bullseye).
KERNELS ?= 5.10 6.1 6.12
.PHONY: check-kernels
check-kernels: $(IOLENS) $(HELPER_BIN)
	@IOLENS=$(abspath $(IOLENS)) BUILD=$(abspath $(BUILD)) tests/kernels/check.sh $(KERNELS)

# examples/fuse-passthrough: a libfuse3 low-level passthrough filesystem traced with libvtrace
# (linked static); tests/cli/vstat_fuse.sh runs it, so `make check` builds it when fuse3 is there.
FUSE_EXAMPLE     := $(BUILD)/examples/fuse-passthrough
FUSE_EXAMPLE_SRC := $(sort $(wildcard examples/fuse-passthrough/*.c))
.PHONY: examples
examples: $(FUSE_EXAMPLE)
$(FUSE_EXAMPLE): $(FUSE_EXAMPLE_SRC) examples/fuse-passthrough/passthrough.h include/vtrace.h $(BUILD)/libvtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(shell $(PKG_CONFIG) --cflags fuse3) $(ALL_LDFLAGS) -pthread -o $@ \
	    $(FUSE_EXAMPLE_SRC) $(BUILD)/libvtrace.a $(shell $(PKG_CONFIG) --libs fuse3)
ifneq ($(ONLY_DEPS),yes)
ifeq ($(shell $(PKG_CONFIG) --exists fuse3 && echo yes),yes)
check check-kernels: $(FUSE_EXAMPLE)
endif
endif

install: $(IOLENS) libvtrace
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 755 $(IOLENS) $(DESTDIR)$(BINDIR)/iolens
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN3_PAGES) $(DESTDIR)$(MANDIR)/man3/
	install -m 644 include/vtrace.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(BUILD)/libvtrace.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/$(VTRACE_SONAME) $(DESTDIR)$(LIBDIR)/
	ln -sf $(VTRACE_SONAME) $(DESTDIR)$(LIBDIR)/libvtrace.so
	sed -e '$(PC_SED)' lib/vtrace/vtrace.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/vtrace.pc

install-links: install
	for l in $(LINKS); do ln -sf iolens $(DESTDIR)$(BINDIR)/$$l; done
	for l in $(LINKS_BESIDE); do \
		found=$$(command -v $$l 2>/dev/null); \
		if [ -n "$$found" ] && [ "$$(readlink -f "$$found")" != "$$(readlink -f $(DESTDIR)$(BINDIR)/iolens)" ]; then \
			echo "$$l: not linked, $$found is there (make it with ln -s iolens DIR/$$l)"; \
		else ln -sf iolens $(DESTDIR)$(BINDIR)/$$l; fi; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/iolens $(addprefix $(DESTDIR)$(BINDIR)/,$(LINKS))
	for l in $(LINKS_BESIDE); do [ "$$(readlink $(DESTDIR)$(BINDIR)/$$l)" != iolens ] || rm -f $(DESTDIR)$(BINDIR)/$$l; done
	rm -f $(DESTDIR)$(INCLUDEDIR)/vtrace.h $(DESTDIR)$(LIBDIR)/pkgconfig/vtrace.pc
	rm -f $(DESTDIR)$(LIBDIR)/libvtrace.a $(DESTDIR)$(LIBDIR)/libvtrace.so $(DESTDIR)$(LIBDIR)/$(VTRACE_SONAME)
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3_PAGES)))

deps:
	@tools/deps.sh $(DEPS_PACKAGES)
test-deps:
	@tools/deps.sh $(DEPS_PACKAGES) $(TEST_PACKAGES) $(addprefix --server=,$(TEST_SERVERS))

clean:
	rm -rf build build-san build-fuzz iolens

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(VTRACE_OBJ:.o=.d)
