#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 22: root opening what the caller merely named (issue 11,
# finding 3). An O_PATH descriptor needs no permission on the file itself,
# only search permission on the way to it, so a caller can name any FIFO
# it can reach: another user's 0600 FIFO (sbxout's, a victim writer
# waiting in open(2) for a reader, as a daemon's client does) and a root
# FIFO of mode 0600. The caller runs sbx-helper directly with such a
# descriptor in every descriptor argument the helper takes (code, result,
# input, session directory,
# standard input) and as its fds 0-2. The helper must refuse each one
# without opening it: the victims' open(2) never returns and their bytes
# stay theirs; the caller's own run still works.
#
# Defence checked by removing it: before protocol v2, own_control_fd
# (helper/load.c) re-opened the control fd through /proc/self/fd as root
# after checking only that it was a FIFO: the victim's open returned, its
# bytes were read as control bytes (SIGINT, SIGTERM to the payload) and
# the victim's close as the client's death (the run killed, 137): tests 1-3
# failed. The sec branch first refused anything but an anonymous pipe open
# for reading there (statfs PIPEFS_MAGIC, not O_PATH); protocol v2 removed
# the control fd and the re-open altogether (control bytes travel on the
# result socket), so no helper process opens anything through /proc/self/fd
# (--control-fd is now a usage error). The test stays for every slot.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 4
V=$T/victim
install -d -o sbxout -m 0711 "$V"
run_as sbxout sh -c "mkfifo -m 0600 $V/fifo"
mkfifo -m 0600 "$T/rootfifo"
# the victims: writers waiting for a reader, with what they would send;
# each writes its own pid first (run_as's $! is a subshell), and none keeps
# prove's output open (a victim still waiting would hold prove for ever)
run_as sbxout sh -c "echo \$\$ > $V/pid; exec sh -c 'printf IIIITTTT > $V/fifo'" </dev/null >/dev/null 2>&1 &
sh -c "echo \$\$ > $T/rootpid; exec sh -c 'printf IIIITTTT > $T/rootfifo'" </dev/null >/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$V/pid" ] && [ -s "$T/rootpid" ] && break; sleep 0.1; done
victim=$(cat "$V/pid"); rootvictim=$(cat "$T/rootpid")
trap 'kill "$victim" "$rootvictim" 2>/dev/null; rm -rf "$T"' EXIT

cat > "$T/opath.py" <<'PY'
# opath.py HELPER FIFO...: run the helper once per descriptor slot with an
# O_PATH fd of FIFO there; one line per run: slot fifo rc stderr
import fcntl, json, os, socket, subprocess, sys, time
import sbxframes as F
helper, fifos = sys.argv[1], sys.argv[2:]
for fifo in fifos:
    for slot in ["code", "result", "input", "work", "stdin", "fd0", "fd1", "fd2"]:
        p_ = os.open(fifo, os.O_PATH)
        m = os.memfd_create("c", os.MFD_ALLOW_SEALING)
        os.write(m, b"import time; time.sleep(0.5); print('ran')")
        fcntl.fcntl(m, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
        res, peer = socket.socketpair()
        fds = {3: p_ if slot == "code" else m, 4: p_ if slot == "result" else peer.fileno()}
        argv = [helper, "run", "--lang", "python", "--code-fd", "3", "--result-fd", "4"]
        if slot in ("input", "work", "stdin"):
            fds[6] = p_
            argv += {"input": ["--input-fd", "6", "--input-name", "x"], "work": ["--work-fd", "6"],
                     "stdin": ["--stdin-fd", "6"]}[slot]
        for k in ("fd0", "fd1", "fd2"):
            if slot == k:
                fds[int(k[2])] = p_
        def setup():
            F.place_fds(fds)
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=setup, close_fds=False, env={})
        peer.close(); os.close(m); os.close(p_)
        res.settimeout(20)
        try:
            while res.recv(65536):
                pass
        except OSError:
            pass
        out, err = p.communicate(timeout=30)
        res.close()
        print(json.dumps({"slot": slot, "fifo": os.path.basename(fifo), "rc": p.returncode,
                          "stderr": err.decode(errors="replace")[:200]}), flush=True)
PY
chmod 0644 "$T/opath.py"
run_as sbxtest /usr/bin/python3 "$T/opath.py" "$HELPER" "$V/fifo" "$T/rootfifo" > "$T/runs" 2>&1
diag "$(cat "$T/runs")"
check "another user's 0600 FIFO named by O_PATH fd in every slot: never opened (its writer still waits)" \
	kill -0 "$victim"
check "a root 0600 FIFO named by O_PATH fd in every slot: never opened" kill -0 "$rootvictim"
check "every run with such a descriptor refused (125) or run without it (0): none killed by the victim's bytes" \
	sh -c '[ "$(grep -c "\"rc\"" "$1")" = 16 ] && ! grep -v "\"rc\": \(0\|125\)," "$1" | grep -q .' _ "$T/runs"
sbx_run run -c 'print("own")'
check "the caller's own run still works" [ "$rc $(cat "$T/out")" = "0 own" ]
finish
