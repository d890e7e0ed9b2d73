#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A stand-in for the sbx command in the Python package's tests: it
records its argv and input files to $FAKE_SBX_LOG and answers like
`sbx run --json` / `--jsonl` according to the code on stdin:
  ok / fail / refuse / garbage / slow / v9  (see answer())."""
import json
import os
import sys
import time


def result(outcome, **kw):
    r = {"schema_version": "1.0", "id": "0" * 32, "outcome": outcome, "exit_code": 0,
         "signal": None, "signal_name": None, "wall_ms": 12, "cpu_ms": 5,
         "memory_peak_bytes": 1 << 20, "pids_peak": 1, "stdout": "", "stderr": "",
         "stdout_truncated": False, "stderr_truncated": False, "traceback": None,
         "artifacts": [], "policy": "default", "limits": {"wall_time_ms": 30000},
         "attempt": 1, "session": "", "language": "python", "limit": None,
         "error": None, "audit": {"start_seq": 1, "end_seq": 2, "chain": "ab" * 32}}
    r.update(kw)
    return r


def answer(code):
    if code == "ok":
        return 0, result("ok", stdout="42\n", artifacts=[
            {"name": "plot.png", "size": 10, "media_type": "image/png", "sha256": "cd" * 32}])
    if code == "fail":
        tb = {"type": "ZeroDivisionError", "message": "division by zero", "line": 1,
              "frames": [{"file": "/code/main.py", "line": 1, "function": "<module>",
                          "text": "1/0"}], "chain": [], "text": "Traceback ..."}
        return 1, result("error", exit_code=1, traceback=tb, error={
            "code": "error", "type": "ZeroDivisionError", "message": "division by zero",
            "hint": None})
    if code == "refuse":
        return 77, result("sandbox_error", exit_code=None, error={
            "code": "limit_above_policy", "type": "limit_above_policy",
            "message": "--timeout 10m exceeds policy default's wall_time 30s",
            "hint": "ask for at most 30s"})
    if code == "v9":
        return 0, result("ok", schema_version="9.0")
    if code == "garbage":
        return 125, None
    return 0, result("ok")


def main():
    argv = sys.argv[1:]
    code = sys.stdin.read()
    log = os.environ.get("FAKE_SBX_LOG")
    if log:
        ins = {}
        for i, a in enumerate(argv):
            if a == "--input":
                with open(argv[i + 1], "rb") as f:
                    ins[os.path.basename(argv[i + 1])] = f.read().decode()
        with open(log, "w") as f:
            json.dump({"argv": argv, "code": code, "inputs": ins}, f)
    status, r = answer(code)
    if r is None:
        sys.stdout.write("not json\n")
        sys.stderr.write("sbx: something broke\n")
        return status
    if "--jsonl" in argv:
        if code == "slow":
            for i in range(100):
                print(json.dumps({"event": "stdout", "data": "%d\n" % i}), flush=True)
                time.sleep(0.1)
        print(json.dumps({"event": "stdout", "data": r["stdout"]}), flush=True)
        print(json.dumps({"event": "result", "result": r}), flush=True)
    else:
        print(json.dumps(r))
    return status


if __name__ == "__main__":
    sys.exit(main())
