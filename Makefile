# SPDX-License-Identifier: ISC
# sbx: one top-level Makefile. Paths are compiled into the programs (never
# read from the environment); give the same PREFIX/SYSCONFDIR/LOCALSTATEDIR/
# LIBEXECDIR to `make` and `make install`.
PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
SBINDIR       ?= $(PREFIX)/sbin
SYSCONFDIR    ?= /etc
LOCALSTATEDIR ?= /var
LIBEXECDIR    ?= $(PREFIX)/libexec
DATADIR       ?= $(PREFIX)/share
MANDIR        ?= $(PREFIX)/share/man
BASHCOMPDIR   ?= $(PREFIX)/share/bash-completion/completions
# README, threat model, seccomp document, examples (the man pages point here)
DOCDIR        ?= $(PREFIX)/share/doc/sbx
# sbx's own data: the result JSON Schema, the post-install step, what the
# sandbox sees at /sbx (sandbox/)
PKGDATADIR     = $(DATADIR)/sbx
# the Python package sbx (python/sbx); Debian's python3 searches
# /usr/local/lib/python3/dist-packages and /usr/lib/python3/dist-packages
PYTHONDIR     ?= $(PREFIX)/lib/python3/dist-packages
# systemd units (packages: /lib/systemd/system on Debian, %{_unitdir} on Fedora)
UNITDIR       ?= $(PREFIX)/lib/systemd/system
# where sbx-cgroup.service names its delegated cgroup (read by the helper)
RUNSTATEDIR   ?= /run
DESTDIR       ?=
# The one version source: sbx --version, sbx-audit --version, the MCP
# server's serverInfo, the .deb (packaging/build-deb) and the .rpm.
VERSION := $(shell cat $(dir $(lastword $(MAKEFILE_LIST)))VERSION)

CC      ?= cc
PKGS     = libseccomp libcap sqlite3 libbsd libmd libsodium inih jansson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
# OpenSSL's libcrypto, for SHA-256 (SHA-NI): sbx-audit (the log) and sbx-image
# (images) link it, never the setuid helper (check-linkage)
CRYPTO_LIBS = $(shell pkg-config --libs libcrypto)
# What each program links (make check-linkage asserts the helper's list):
# the setuid helper never SQLite, jansson or libsodium (the recorder
# links inih for policy.c's sbx_valid_name, which imgstamp.c uses).
# The helper loads seccomp programs libseccomp compiled at build time
# (seccomp/gen.c): libseccomp is linked by the generator, not by it.
HELPER_PKGS   = libcap libbsd libmd inih
RECORDER_PKGS = sqlite3 libsodium jansson libbsd inih
COLLECTOR_PKGS = libbsd libmd
HELPER_LIBS   = $(shell pkg-config --libs $(HELPER_PKGS))
RECORDER_LIBS = $(shell pkg-config --libs $(RECORDER_PKGS))
COLLECTOR_LIBS = $(shell pkg-config --libs $(COLLECTOR_PKGS))

# -Wcast-qual: a const is dropped only by sbx_unconst() (common/unconst.h),
# for the interfaces older than const; -Wconversion: every narrowing or
# sign change is a cast that says so.
WARN     = -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla \
	   -Wmissing-prototypes -Wstrict-prototypes -Wcast-qual -Wconversion
HARDEN   = -fstack-protector-strong -fPIE
ifeq ($(SANITIZE),1)
OPT      = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_LD   = -fsanitize=address,undefined
else
OPT      = -O2 -g -D_FORTIFY_SOURCE=2
endif
INCLUDES = -Icommon -Iauditlog -Irecorder -Icollector -Iaudit -Ihelper -Iclient -Iclient/mcp -Isigner -Iimage -Iseccomp
CFLAGS  ?=
CFLAGS  += -std=c17 -D_GNU_SOURCE $(WARN) $(HARDEN) $(OPT) -I$(B) $(INCLUDES) $(PKG_CFLAGS) -MMD -MP
LDFLAGS += -pie -Wl,-z,relro,-z,now $(SAN_LD)

B = build
# Libraries by who links them (HACKING.md): libsbxcommon.a is what the
# setuid helper may link; libsbxlog.a is the audit-log format and writer
# (sbx-recorder, sbx-audit); recorder/ is sbx-recorder, the audit-log side
# of a run, exec'd by the helper as _sbx; collector/ is sbx-collector, which
# copies /out and the changeset, exec'd by the helper as the caller.
COMMON_SRC   = $(filter-out common/testhook.c,$(wildcard common/*.c))
AUDITLOG_SRC = $(wildcard auditlog/*.c)
RECORDER_SRC = $(wildcard recorder/*.c)
COLLECTOR_SRC = $(wildcard collector/*.c)
HELPER_SRC   = $(wildcard helper/*.c)
CLIENT_SRC   = $(wildcard client/*.c client/mcp/*.c)
RELAY_SRC    = $(wildcard relay/*.c)
SIGNER_SRC   = $(wildcard signer/*.c)
AUDIT_SRC    = $(wildcard audit/*.c)
IMAGE_SRC    = $(wildcard image/*.c)
SECCOMP_SRC  = $(wildcard seccomp/*.c)
UNIT_SRC     = $(wildcard tests/unit/test_*.c)

COMMON_OBJ   = $(COMMON_SRC:%.c=$(B)/%.o)
AUDITLOG_OBJ = $(AUDITLOG_SRC:%.c=$(B)/%.o)
RECORDER_OBJ = $(RECORDER_SRC:%.c=$(B)/%.o)
COLLECTOR_OBJ = $(COLLECTOR_SRC:%.c=$(B)/%.o)
HELPER_OBJ   = $(HELPER_SRC:%.c=$(B)/%.o)
CLIENT_OBJ   = $(CLIENT_SRC:%.c=$(B)/%.o)
RELAY_OBJ    = $(RELAY_SRC:%.c=$(B)/%.o)
SIGNER_OBJ   = $(SIGNER_SRC:%.c=$(B)/%.o)
AUDIT_OBJ    = $(AUDIT_SRC:%.c=$(B)/%.o)
IMAGE_OBJ    = $(IMAGE_SRC:%.c=$(B)/%.o)
UNIT_BIN     = $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
LIBCOMMON    = $(B)/libsbxcommon.a
LIBLOG       = $(B)/libsbxlog.a
# The escape tests' attacker programs, and a helper and recorder with
# pause points at each privileged phase (common/testhook.h) built from the
# same sources with -DSBX_TEST_HOOKS (the hooked helper execs the hooked
# recorder). None of them is installed by `make install`.
HOOKED_HELPER_OBJ   = $(HELPER_SRC:%.c=$(B)/hooked/%.o) $(B)/hooked/common/testhook.o
HOOKED_RECORDER_OBJ = $(RECORDER_SRC:%.c=$(B)/hooked/%.o) $(B)/hooked/common/testhook.o $(B)/image/dpkgdb.o
HOOKED_COLLECTOR_OBJ = $(COLLECTOR_SRC:%.c=$(B)/hooked/%.o) $(B)/hooked/common/testhook.o
ESCAPE_SRC = $(wildcard tests/escape/bin/*.c)
ESCAPE_BIN = $(ESCAPE_SRC:tests/escape/bin/%.c=$(B)/tests/escape/%)

PROGS = $(B)/sbx-helper $(B)/sbx-recorder $(B)/sbx-collector $(B)/sbx $(B)/sbx-audit $(B)/sbx-relay $(B)/sbx-signer $(B)/sbx-image
# Built with the programs, never installed: bench/audit and the search test use it.
TOOLS = $(B)/audit-bench

.PHONY: deps deps-run deps-test dist uninstall install-doc install-python check-python all check check-linkage check-vm check-unit check-setup check-integration check-escape escape-bins install install-files install-systemd postinst clean bench fuzz fuzz-build lint ci help FORCE
all: $(PROGS) $(TOOLS)

# Rewritten only when a path changes, so a different PREFIX rebuilds.
$(B)/paths.h: FORCE
	@mkdir -p $(B)
	@printf '#define SBX_SYSCONFDIR "%s"\n#define SBX_LOCALSTATEDIR "%s"\n#define SBX_LIBEXECDIR "%s"\n#define SBX_BINDIR "%s"\n#define SBX_RUNSTATEDIR "%s"\n#define SBX_DATADIR "%s"\n#define SBX_VERSION "%s"\n' \
	  '$(SYSCONFDIR)' '$(LOCALSTATEDIR)' '$(LIBEXECDIR)' '$(BINDIR)' '$(RUNSTATEDIR)' '$(DATADIR)' '$(VERSION)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The result JSON Schema built into sbx (client/resultschema.c): the
# bytes of docs/result.schema.json as a C array, NUL-terminated.
$(B)/result_schema.h: docs/result.schema.json
	@mkdir -p $(B)
	@{ echo '/* generated from $< */'; echo 'static const char sbx_result_schema_json[] = {'; \
	  od -An -v -tx1 $< | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0};'; } > $@.tmp && mv $@.tmp $@
$(B)/client/resultschema.o $(B)/fuzz/client/resultschema.o $(B)/lint/client/resultschema.tidy $(B)/lint/cppcheck.ok: $(B)/result_schema.h

# Header dependencies come from the compiler (-MMD -MP, the .d files).
$(B)/%.o: %.c $(B)/paths.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The setuid helper's seccomp programs: the rules of seccomp/rules.c
# compiled by libseccomp at build time (seccomp_export_bpf), one per
# profile and network mode, as C data (helper/seccomp.c loads them;
# tests/unit/test_seccomp.c compares them with a run-time compilation).
$(B)/seccomp-gen: $(B)/seccomp/gen.o $(B)/seccomp/rules.o
	$(CC) $(LDFLAGS) -o $@ $^ $$(pkg-config --libs libseccomp)
$(B)/seccomp_bpf.h: $(B)/seccomp-gen
	$(B)/seccomp-gen $@
$(B)/helper/seccomp.o $(B)/hooked/helper/seccomp.o $(B)/lint/helper/seccomp.tidy $(B)/lint/cppcheck.ok: $(B)/seccomp_bpf.h

$(LIBCOMMON): $(COMMON_OBJ)
	rm -f $@ && ar rcs $@ $^
$(LIBLOG): $(AUDITLOG_OBJ)
	rm -f $@ && ar rcs $@ $^
# For the unit tests only: archives, so a test pulls in just what it uses.
$(B)/libsbxaudit.a: $(filter-out $(B)/audit/main.o,$(AUDIT_OBJ))
	rm -f $@ && ar rcs $@ $^
$(B)/libsbxrecorder.a: $(filter-out $(B)/recorder/main.o,$(RECORDER_OBJ))
	rm -f $@ && ar rcs $@ $^
$(B)/libsbxclient.a: $(filter-out $(B)/client/main.o,$(CLIENT_OBJ))
	rm -f $@ && ar rcs $@ $^
$(B)/libsbximage.a: $(filter-out $(B)/image/main.o,$(IMAGE_OBJ))
	rm -f $@ && ar rcs $@ $^

# The setuid program: helper/ and libsbxcommon.a, nothing else of the tree.
$(B)/sbx-helper: $(HELPER_OBJ) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(HELPER_LIBS)
# Its unprivileged partner: recorder/, the audit log, common/.
# image/dpkgdb.o: the recorder reads the dpkg database of a run's tree
# with it, as sbx-image does of an image's (recorder/environment.c)
$(B)/sbx-recorder: $(RECORDER_OBJ) $(B)/image/dpkgdb.o $(LIBLOG) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(RECORDER_LIBS)
$(B)/hooked/%.o: %.c $(B)/paths.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSBX_TEST_HOOKS -c -o $@ $<
$(B)/sbx-helper-hooked: $(HOOKED_HELPER_OBJ) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(HELPER_LIBS)
$(B)/sbx-recorder-hooked: $(HOOKED_RECORDER_OBJ) $(LIBLOG) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(RECORDER_LIBS)
# The caller's side of a run's end: collector/ and common/, libc, libbsd
# (strlcpy) and libmd (the changeset's SHA-256).
$(B)/sbx-collector: $(COLLECTOR_OBJ) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(COLLECTOR_LIBS)
$(B)/sbx-collector-hooked: $(HOOKED_COLLECTOR_OBJ) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(COLLECTOR_LIBS)

# What the setuid binary links and contains: exactly these shared
# libraries, and not one symbol of SQLite (sqlite3_), jansson (json_) or
# libsodium (crypto_, sodium_), defined or undefined; nor an import from
# libseccomp (its seccomp programs are data, $(B)/seccomp_bpf.h).
HELPER_NEEDED = libbsd.so.0 libc.so.6 libcap.so.2 libinih.so.1 libmd.so.0
check-linkage: $(B)/sbx-helper $(B)/sbx-helper-hooked $(B)/sbx-signer
	@for h in $(B)/sbx-helper $(B)/sbx-helper-hooked; do \
	  got=$$(readelf -d $$h | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^lib[at]san\|^libubsan\|^libstdc\|^libm\.\|^libgcc\|^libdl\|^libpthread\|^librt' | sort | tr '\n' ' '); \
	  want=$$(echo $(HELPER_NEEDED) | tr ' ' '\n' | sort | tr '\n' ' '); \
	  if [ "$$got" != "$$want" ]; then echo "check-linkage: $$h NEEDED: $$got; want: $$want"; exit 1; fi; \
	  if nm -a $$h 2>/dev/null | grep -E ' (sqlite3_|json_|crypto_|sodium_)' | grep -q .; then \
	    echo "check-linkage: $$h has SQLite, jansson or libsodium symbols:"; \
	    nm -a $$h | grep -E ' (sqlite3_|json_|crypto_|sodium_)' | head; exit 1; fi; \
	  if nm -D $$h 2>/dev/null | grep -E ' (sqlite3_|json_|crypto_|sodium_)' | grep -q .; then \
	    echo "check-linkage: $$h imports SQLite, jansson or libsodium symbols"; exit 1; fi; \
	  if nm -D --undefined-only $$h 2>/dev/null | grep -E ' seccomp_' | grep -q .; then \
	    echo "check-linkage: $$h imports libseccomp symbols (it loads precompiled programs)"; exit 1; fi; \
	done
	@echo "check-linkage: $(B)/sbx-helper needs only $(HELPER_NEEDED)"
	@got=$$(readelf -d $(B)/sbx-signer | sed -n 's/.*(NEEDED).*\[\(lib[^.]*\)\.so.*\]/\1/p' | grep -v '^lib[at]san$$\|^libubsan$$\|^libgcc_s$$\|^libm$$' | sort | tr '\n' ' '); \
	  if [ "$$got" != "libc libsodium " ]; then \
	    echo "check-linkage: $(B)/sbx-signer links $$got; want: libc libsodium (the key's holder links no log code)"; exit 1; fi
	@echo "check-linkage: $(B)/sbx-signer needs only libc and libsodium"
# Attacker programs run natively even in a SANITIZE=1 build: the sanitizers
# are for sbx's own code, and inside the sandbox LeakSanitizer cannot stop
# the world (ptrace is denied) and fails the program at exit.
$(B)/tests/escape/%: tests/escape/bin/%.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fsanitize=% -MMD -MP,$(CFLAGS)) $(filter-out -fsanitize=%,$(LDFLAGS)) -o $@ $<
escape-bins: $(B)/sbx-helper-hooked $(B)/sbx-recorder-hooked $(B)/sbx-collector-hooked $(ESCAPE_BIN)

$(B)/sbx: $(CLIENT_OBJ) $(LIBLOG) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
# sbx-audit links libcrypto for its SHA-256 (audit/sha256_ossl.c).
$(B)/sbx-audit: $(AUDIT_OBJ) $(B)/libsbxsigner.a $(LIBLOG) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(CRYPTO_LIBS)
$(B)/sbx-image: $(IMAGE_OBJ) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(CRYPTO_LIBS)
# The egress relay (runs as _sbxnet): glibc, libseccomp and the HOST:PORT parser.
$(B)/sbx-relay: $(RELAY_OBJ) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $$(pkg-config --libs libseccomp)
# The signer (runs as _sbxsign, holds the key): the record format and
# libsodium, never the log's SQLite writer (check-linkage); sbx-audit's
# in-process use of the signer directory, which reads the log, is
# signdir_log.c, in libsbxsigner.a only.
SIGNER_PKGS = libsodium
$(B)/sbx-signer: $(filter-out $(B)/signer/signdir_log.o,$(SIGNER_OBJ)) $(LIBLOG) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(SIGNER_PKGS))
$(B)/libsbxsigner.a: $(filter-out $(B)/signer/main.o,$(SIGNER_OBJ))
	rm -f $@ && ar rcs $@ $^
$(B)/audit-bench: $(B)/bench/audit-bench.o $(LIBLOG) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# Unit tests link the objects they test, from these archives (none
# #includes a .c file: HACKING.md).
UNIT_LIBS = $(B)/libsbxaudit.a $(B)/libsbxrecorder.a $(B)/libsbxclient.a $(B)/libsbxsigner.a $(B)/libsbximage.a $(LIBLOG) $(LIBCOMMON)
# test_signer runs the real sbx-signer
$(B)/tests/test_signer: $(B)/sbx-signer
# test_seccomp: the helper's precompiled programs against libseccomp's
# run-time compilation of the same rules
$(B)/tests/test_seccomp: tests/unit/test_seccomp.c $(B)/helper/seccomp.o $(B)/seccomp/rules.o $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(PKG_LIBS) $$(pkg-config --libs cmocka)
# test_rlimits: the setuid helper's rlimits.o as the helper links it
$(B)/tests/test_rlimits: tests/unit/test_rlimits.c $(B)/helper/rlimits.o $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) $$(pkg-config --libs cmocka)
$(B)/tests/%: tests/unit/%.c $(UNIT_LIBS) $(B)/paths.h $(B)/result_schema.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSBX_SRCDIR='"$(CURDIR)"' -DSBX_BUILDDIR='"$(CURDIR)/$(B)"' $(LDFLAGS) -o $@ $< $(UNIT_LIBS) $(PKG_LIBS) $(CRYPTO_LIBS) $$(pkg-config --libs cmocka)

check-unit: $(UNIT_BIN)
	CMOCKA_MESSAGE_OUTPUT=TAP prove -v $(UNIT_BIN)

# Integration tests install into a root-owned temporary prefix and run the
# client as an unprivileged user (tests/integration/lib.sh does the set-up).
CHECK_PREFIX ?= /tmp/sbx-check
CHECK_ENV = SBX_SRCDIR=$(CURDIR) SBX_CHECK_PREFIX=$(CHECK_PREFIX) CMOCKA_MESSAGE_OUTPUT=TAP \
	    SBX_MAKEFLAGS='$(if $(SANITIZE),SANITIZE=$(SANITIZE))'
check-setup: all
	$(CHECK_ENV) tests/integration/setup.sh
check-integration: check-setup
	$(CHECK_ENV) prove -v tests/integration/*.t
# Adversarial tests, one script per attack class (tests/escape/*.t).
check-escape: check-setup
	$(CHECK_ENV) prove -v tests/escape/*.t

# cgroup v2 in a qemu VM (also part of check, as tests/integration/10-*).
check-vm: all
	SBX_SRCDIR=$(CURDIR) prove -v tests/integration/10-cgroup-v2-vm.t

# Everything, in one prove run (unit tests print TAP through cmocka).
# The log is kept in $(B)/check.log; on a failure, each failing test and
# its diagnostics are printed again after prove's summary, where a CI log
# read from its end shows them (tools/tap-failures).
check: all $(UNIT_BIN) check-linkage check-setup check-python
	@{ $(CHECK_ENV) prove -v $(UNIT_BIN) tests/integration/*.t tests/escape/*.t 2>&1; echo $$? >$(B)/check.rc; } | \
	  tee $(B)/check.log; rc=$$(cat $(B)/check.rc); \
	  [ "$$rc" = 0 ] || tools/tap-failures $(B)/check.log; exit $$rc

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang and run one after
# the other, FUZZ_SECONDS each, from the checked-in seeds in
# tests/fuzz/corpus/NAME/ (new inputs go to $(B)/fuzz/corpus-NAME/, crashes
# to $(B)/fuzz/crash-NAME-*). The code under test is compiled again with
# coverage instrumentation and ASan+UBSan.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS  = policy args traceback result record note stamp fleet signer_state
FB            = $(B)/fuzz
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS   = -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
		$(FUZZ_SAN) -fsanitize=fuzzer-no-link -I$(B) $(INCLUDES) $(PKG_CFLAGS)
FUZZ_COMMON   = $(COMMON_SRC:%.c=$(FB)/%.o) $(AUDITLOG_SRC:%.c=$(FB)/%.o) $(FB)/recorder/traceback.o
FUZZ_CLIENT   = $(filter-out $(FB)/client/main.o,$(CLIENT_SRC:%.c=$(FB)/%.o))
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FB)/fuzz_%)

$(FB)/%.o: %.c $(B)/paths.h $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<
$(FB)/libcommon.a: $(FUZZ_COMMON)
	rm -f $@ && ar rcs $@ $^
$(FB)/libclient.a: $(FUZZ_CLIENT)
	rm -f $@ && ar rcs $@ $^
FUZZ_LINK = $(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)
$(FB)/fuzz_policy: $(FB)/tests/fuzz/fuzz_policy.o $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_args: $(FB)/tests/fuzz/fuzz_args.o $(FB)/helper/args.o $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_traceback: $(FB)/tests/fuzz/fuzz_traceback.o $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_stamp: $(FB)/tests/fuzz/fuzz_stamp.o $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_result: $(FB)/tests/fuzz/fuzz_result.o $(FB)/libclient.a $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_record: $(FB)/tests/fuzz/fuzz_record.o $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_note: $(FB)/tests/fuzz/fuzz_note.o $(FB)/audit/witness.o $(FB)/audit/vkey.o $(FB)/libcommon.a
	$(FUZZ_LINK)
$(FB)/fuzz_fleet: $(FB)/tests/fuzz/fuzz_fleet.o $(FB)/audit/shipfile.o $(FB)/audit/keyring.o \
		$(FB)/audit/cosign.o $(FB)/audit/hosts.o $(FB)/audit/vkey.o $(FB)/libcommon.a
	$(FUZZ_LINK)

$(FB)/fuzz_signer_state: $(FB)/tests/fuzz/fuzz_signer_state.o $(FB)/signer/state.o $(FB)/libcommon.a
	$(FUZZ_LINK)

fuzz-build: $(FUZZ_BINS)

# Per target: executions and coverage (cov: edges, ft: features) at the end.
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FB)/corpus-$$t; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s (log: $(FB)/fuzz_$$t.log)"; \
	  $(FB)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -max_len=65536 \
	    -timeout=10 -rss_limit_mb=4096 -artifact_prefix=$(FB)/crash-$$t- \
	    $(FB)/corpus-$$t tests/fuzz/corpus/$$t > $(FB)/fuzz_$$t.log 2>&1; rc=$$?; \
	  grep -E '^#[0-9]+.*(DONE|cov:)' $(FB)/fuzz_$$t.log | tail -1; \
	  grep -E 'stat::number_of_executed_units' $(FB)/fuzz_$$t.log; \
	  if [ $$rc -ne 0 ]; then tail -40 $(FB)/fuzz_$$t.log; echo "fuzz_$$t FAILED"; exit 1; fi; \
	done

# Static analysis, both must be clean: cppcheck (options here, suppressions
# with their reasons in tools/cppcheck.supp, jansson's macros in
# tools/cppcheck.cfg) and clang-tidy (checks in .clang-tidy, tests/.clang-tidy
# and bench/.clang-tidy), over every C source.
LINT_SRC   = $(COMMON_SRC) $(AUDITLOG_SRC) $(RECORDER_SRC) $(COLLECTOR_SRC) $(HELPER_SRC) $(SIGNER_SRC) $(CLIENT_SRC) $(AUDIT_SRC) \
	     $(RELAY_SRC) $(IMAGE_SRC) \
	     $(SECCOMP_SRC) \
	     $(UNIT_SRC) \
	     $(wildcard tests/fuzz/*.c) $(wildcard bench/*.c) $(wildcard tests/escape/bin/*.c) \
	     $(wildcard tests/vm/payloads/*.c) tests/fake-helper.c
LINT_FLAGS = -std=c17 -D_GNU_SOURCE -DSBX_SRCDIR='"."' -DSBX_BUILDDIR='"./$(B)"' -I$(B) $(INCLUDES) \
	     $(PKG_CFLAGS) $(shell pkg-config --cflags cmocka)
TIDY_OUT   = $(LINT_SRC:%.c=$(B)/lint/%.tidy)
lint: $(B)/lint/cppcheck.ok $(TIDY_OUT)
	@echo "lint: cppcheck and clang-tidy clean"
$(B)/lint/cppcheck.ok: $(LINT_SRC) $(wildcard */*.h) tools/cppcheck.supp tools/cppcheck.cfg $(B)/paths.h
	@mkdir -p $(dir $@)
	cppcheck -q --std=c11 --enable=warning,style,portability,performance --error-exitcode=1 \
	  --inline-suppr --library=tools/cppcheck.cfg --suppressions-list=tools/cppcheck.supp -D_GNU_SOURCE -DSBX_SRCDIR='"."' \
	  -I$(B) $(INCLUDES) -j2 $(LINT_SRC)
	@touch $@
# One stamp per source (make -j runs them in parallel; reruns check only
# what changed).
$(B)/lint/%.tidy: %.c $(wildcard */*.h) .clang-tidy tests/.clang-tidy bench/.clang-tidy $(B)/paths.h
	@mkdir -p $(dir $@)
	@clang-tidy -quiet $< -- $(LINT_FLAGS) 2>/dev/null
	@touch $@

# Man pages name the packages' paths; the installed copies name this build's,
# and the footer names the version (.Os sbx VERSION; groff's default is "BSD").
MAN_SRC = $(wildcard man/*.1 man/*.5 man/*.8)
MAN_OUT = $(MAN_SRC:man/%=$(B)/man/%)
man: $(MAN_OUT)
$(B)/man/%: man/% $(B)/paths.h VERSION
	@mkdir -p $(dir $@)
	sed -e 's|/usr/libexec/sbx|$(LIBEXECDIR)/sbx|g' -e 's|/etc/sbx|$(SYSCONFDIR)/sbx|g' \
	    -e 's|/var/lib/sbx|$(LOCALSTATEDIR)/lib/sbx|g' -e 's|/run/sbx/|$(RUNSTATEDIR)/sbx/|g' \
	    -e 's|/usr/share/doc/sbx|$(DOCDIR)|g' -e 's|/usr/share/sbx/|$(PKGDATADIR)/|g' \
	    -e 's|^\.Os sbx$$|.Os sbx $(VERSION)|' $< > $@

install-man: man
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(B)/man/sbx.1 $(B)/man/sbx-audit.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(B)/man/sbx.conf.5 $(B)/man/sbx.policy.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(B)/man/sbx-helper.8 $(B)/man/sbx-image.8 $(DESTDIR)$(MANDIR)/man8/

install-completion:
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 packaging/completion/sbx $(DESTDIR)$(BASHCOMPDIR)/sbx
	install -m 0644 packaging/completion/sbx-audit $(DESTDIR)$(BASHCOMPDIR)/sbx-audit
	sed 's|/var/lib/sbx-images|$(LOCALSTATEDIR)/lib/sbx-images|' packaging/completion/sbx-image \
	    > $(DESTDIR)$(BASHCOMPDIR)/sbx-image && chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/sbx-image

# sbx-cgroup.service: a delegated cgroup v2 subtree on systemd hosts;
# sbx-images.service: the curated images mounted at boot (sbx-image(8))
install-systemd:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(LIBEXECDIR)/sbx
	install -m 0755 packaging/systemd/sbx-cgroup-keeper $(DESTDIR)$(LIBEXECDIR)/sbx/sbx-cgroup-keeper
	sed -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' -e 's|@RUNSTATEDIR@|$(RUNSTATEDIR)|g' \
	    packaging/systemd/sbx-cgroup.service.in > $(DESTDIR)$(UNITDIR)/sbx-cgroup.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/sbx-cgroup.service
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|g' \
	    packaging/systemd/sbx-images.service.in > $(DESTDIR)$(UNITDIR)/sbx-images.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/sbx-images.service

# Documentation: what the man pages point to (sbx(1) SEE ALSO).
DOC_FILES = README.md LICENSE docs/threat-model.md docs/seccomp.md docs/outcomes.md
EXAMPLE_FILES = $(wildcard examples/*.py examples/*.sh)
FIXER_FILES = $(wildcard examples/fixers/*)
AGENT_FILES = $(wildcard examples/agents/*.py)
install-doc:
	install -d $(DESTDIR)$(DOCDIR)/examples/fixers $(DESTDIR)$(DOCDIR)/examples/agents
	install -m 0644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/
	install -m 0644 $(EXAMPLE_FILES) $(DESTDIR)$(DOCDIR)/examples/
	install -m 0644 $(FIXER_FILES) $(DESTDIR)$(DOCDIR)/examples/fixers/
	install -m 0644 $(AGENT_FILES) $(DESTDIR)$(DOCDIR)/examples/agents/

# The Python package (standard library only), with VERSION filled in.
PY_FILES = $(wildcard python/sbx/*.py)
install-python:
	install -d $(DESTDIR)$(PYTHONDIR)/sbx
	install -m 0644 $(PY_FILES) $(DESTDIR)$(PYTHONDIR)/sbx/
	sed -i 's/@VERSION@/$(VERSION)/' $(DESTDIR)$(PYTHONDIR)/sbx/__init__.py
# Its tests and the agent examples' stub loops, against a stand-in sbx.
check-python:
	cd python && python3 -W error -m unittest -v tests/test_sbx.py tests/test_examples.py

install-files: all install-man install-completion install-systemd install-doc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/sbx $(DESTDIR)$(SYSCONFDIR)/sbx/policies.d \
	  $(DESTDIR)$(LOCALSTATEDIR)/lib/sbx $(DESTDIR)$(PKGDATADIR)
	install -m 0755 $(B)/sbx $(B)/sbx-audit $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(SBINDIR)
	install -m 0755 $(B)/sbx-image $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(B)/sbx-helper $(DESTDIR)$(LIBEXECDIR)/sbx/sbx-helper
	install -m 0755 $(B)/sbx-recorder $(DESTDIR)$(LIBEXECDIR)/sbx/sbx-recorder
	install -m 0711 $(B)/sbx-collector $(DESTDIR)$(LIBEXECDIR)/sbx/sbx-collector
	install -m 0755 packaging/sbx-postinst $(DESTDIR)$(PKGDATADIR)/sbx-postinst
	install -m 0644 docs/result.schema.json $(DESTDIR)$(PKGDATADIR)/result.schema.json
	install -m 0755 $(B)/sbx-relay $(DESTDIR)$(LIBEXECDIR)/sbx/sbx-relay
	install -m 0755 $(B)/sbx-signer $(DESTDIR)$(LIBEXECDIR)/sbx/sbx-signer
	# what the sandbox sees read-only at /sbx (sbx.conf(5))
	install -d $(DESTDIR)$(PKGDATADIR)/sandbox/python
	install -m 0644 sandbox/python/*.py $(DESTDIR)$(PKGDATADIR)/sandbox/python/
	@for f in policies/*.policy; do \
	  t=$(DESTDIR)$(SYSCONFDIR)/sbx/policies.d/$$(basename $$f); \
	  [ -e $$t ] || install -m 0644 $$f $$t; done
	@[ -e $(DESTDIR)$(SYSCONFDIR)/sbx/sbx.conf ] || install -m 0644 policies/sbx.conf $(DESTDIR)$(SYSCONFDIR)/sbx/sbx.conf

# The post-install step (accounts, key, modes, setuid bit) is skipped for
# staged installs; packages run the same script from their maintainer scripts.
install: install-files install-python
	@if [ -z "$(DESTDIR)" ]; then \
	  sh packaging/sbx-postinst --bindir '$(BINDIR)' --libexecdir '$(LIBEXECDIR)' \
	    --sysconfdir '$(SYSCONFDIR)' --localstatedir '$(LOCALSTATEDIR)'; \
	  echo "installed; add users to group sbx to let them run code (they log in again, or run newgrp sbx)"; \
	else echo "DESTDIR set: run $(PKGDATADIR)/sbx-postinst on the target system"; fi

# Everything `make install` put there, with the same variables; the audit
# log and its key stay (packaging/uninstall says what it kept and why).
uninstall:
	@DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' SBINDIR='$(SBINDIR)' LIBEXECDIR='$(LIBEXECDIR)' SYSCONFDIR='$(SYSCONFDIR)' \
	  LOCALSTATEDIR='$(LOCALSTATEDIR)' MANDIR='$(MANDIR)' BASHCOMPDIR='$(BASHCOMPDIR)' UNITDIR='$(UNITDIR)' \
	  DOCDIR='$(DOCDIR)' PKGDATADIR='$(PKGDATADIR)' RUNSTATEDIR='$(RUNSTATEDIR)' PYTHONDIR='$(PYTHONDIR)' \
	  sh packaging/uninstall

# Dependencies by group (tools/install-deps): run = building and running sbx
# and the curated interpreters (what quickstart.sh installs); test = all
# that `make ci` needs besides. `make deps` installs both.
deps:
	tools/install-deps all
deps-run:
	tools/install-deps run
deps-test:
	tools/install-deps test

# The release tarball sbx-VERSION.tar.gz (the README's way to get the
# source, and the RPM's Source0): the tracked and new files, no build output.
dist:
	packaging/make-dist build-pkg

# What CI runs (README's test command, .ci/run): dependencies, the whole
# suite, static analysis, the whole suite again under ASan+UBSan (its own
# build directory and install prefix), and a short fuzzing pass.
CI_FUZZ_SECONDS ?= 10
ci:
	$(MAKE) deps
	$(MAKE) check
	$(MAKE) -j2 lint
	$(MAKE) check SANITIZE=1 B=$(B)-san CHECK_PREFIX=$(CHECK_PREFIX)-san
	$(MAKE) fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)

# Packages (packaging/debian, packaging/rpm); the files land in build-pkg/.
deb:
	packaging/build-deb
rpm:
	packaging/build-rpm

bench: all
	bench/startup
	B=$(B) bench/audit
	bench/live-session
	@# root only: a test network namespace (the install in PREFIX is used)
	@if [ "$$(id -u)" = 0 ]; then bench/egress --prefix $(PREFIX); else echo "bench/egress: skipped (needs root)"; fi

clean:
	rm -rf $(B) $(B)-san build-check* build-vm build-man build-image-cache

# What each target is for (HACKING.md says where each kind of change goes).
help:
	@echo 'Build (B=DIR build directory, SANITIZE=1 for ASan+UBSan):'
	@echo '  all               the programs: sbx-helper (setuid), sbx-recorder, sbx-collector, sbx-signer, sbx, sbx-audit, sbx-relay, sbx-image'
	@echo '  man               the man pages, checked'
	@echo 'Tests (CHECK_PREFIX=/tmp/sbx-check-NAME: a root-owned temporary install):'
	@echo '  check-unit        cmocka unit tests (no root needed)'
	@echo '  check-linkage     the setuid helper links only libc, libbsd, libmd, libcap, libinih'
	@echo '  check-setup       install into CHECK_PREFIX for single tests: prove -v tests/integration/NN-x.t'
	@echo '  check-integration tests/integration/*.t (root; runs the client as sbxtest)'
	@echo '  check-escape      tests/escape/*.t, one attack class each (root)'
	@echo '  check-vm          cgroup v2 in a qemu VM'
	@echo '  check-python      the Python package'"'"'s tests and the agent examples'"'"' stub loops'
	@echo '  check             unit, linkage, integration and escape tests in one prove run'
	@echo '  lint              cppcheck and clang-tidy'
	@echo '  fuzz              libFuzzer targets, FUZZ_SECONDS each'
	@echo '  fuzz-build        build the fuzz targets only'
	@echo '  ci                what CI runs: deps, check, lint, check SANITIZE=1, fuzz'
	@echo '  bench             bench/startup (bare, bubblewrap, sbx), bench/audit, bench/egress'
	@echo 'Install and packages (PREFIX, DESTDIR):'
	@echo '  install           files, then sbx-postinst (accounts, key, setuid bit) unless DESTDIR'
	@echo '  install-doc       README, docs and examples into DOCDIR'
	@echo '  install-python    the Python package (python/sbx) into PYTHONDIR'
	@echo '  uninstall         what install put there; the audit log and its key stay'
	@echo '  deps              tools/install-deps all (apt: build, test and runtime packages)'
	@echo '  deps-run          tools/install-deps run (building and running sbx only)'
	@echo '  deps-test         tools/install-deps test (run, plus what make ci uses)'
	@echo '  deb               the Debian package, into build-pkg/'
	@echo '  dist              the release tarball sbx-VERSION.tar.gz, into build-pkg/'
	@echo '  clean             remove the build directories'
	@echo '  help              this list'

# Header dependencies written by -MMD -MP.
-include $(shell find $(B) -name "*.d" 2>/dev/null)
