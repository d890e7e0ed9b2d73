# SPDX-License-Identifier: ISC
"""Run code in the sbx sandbox from Python.

A thin layer over the sbx command's JSON contract (sbx(1) "The result",
docs/result.schema.json), standard library only::

    import sbx
    r = sbx.run("print(6*7)")
    r.outcome, r.stdout            # ('ok', '42\\n')
    for ev in sbx.stream("import time\\nfor i in range(3): print(i); time.sleep(1)"):
        print(ev.kind, ev.data)    # stdout 0 ... then result

run() returns a Result for every run the sandbox made, whatever the
program did (outcome error, timeout, memory_limit, ...: see Result.error);
when sbx itself could not run the code (a usage error, a policy refusal,
a set-up or audit-log failure: outcome sandbox_error) it raises sbx.Error,
whose code is the result's error.code from sbx's error-code table
(sbx(1) ERRORS).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from .result import SCHEMA_MAJOR, Artifact, Audit, ErrorInfo, Frame, Result, Traceback

__all__ = ["run", "stream", "Result", "Event", "Error", "Artifact", "Audit", "ErrorInfo",
           "Frame", "Traceback", "SCHEMA_MAJOR"]
__version__ = "@VERSION@"

Inputs = Union[Mapping[str, Union[bytes, str]], Iterable[Union[str, "os.PathLike[str]"]], None]


class Error(Exception):
    """sbx could not run the code. code: the error code (usage,
    unknown_language, policy_denied, limit_above_policy, not_in_group,
    setup, audit_unavailable, ...); message: sbx's one-line reason; hint:
    what to do, when sbx says; result: the whole Result when there was
    one; status: sbx's exit status."""

    def __init__(self, code: str, message: str, hint: Optional[str] = None,
                 result: Optional[Result] = None, status: Optional[int] = None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.hint = hint
        self.result = result
        self.status = status


@dataclass(frozen=True)
class Event:
    """One line of `sbx run --jsonl`: kind is stdout, stderr, attempt, fix
    or result; data is the text of stdout/stderr events; result is set for
    attempt and result events."""
    kind: str
    data: Optional[str]
    result: Optional[Result]
    raw: Dict[str, Any]


def _timeout_arg(timeout: Union[int, float, str]) -> str:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, str)):
        raise TypeError("timeout: seconds (a number) or a duration string such as '2s'")
    if isinstance(timeout, str):
        return timeout
    if not timeout > 0:
        raise ValueError("timeout: must be more than 0 seconds")
    return "%dms" % math.ceil(timeout * 1000.0)  # 0.0001 s is 1 ms, not 0


def _argv(executable: str, fmt: str, language: str, policy: Optional[str],
          timeout: Union[int, float, str, None], session: Optional[str],
          artifacts: Optional[str], input_paths: Sequence[str],
          extra: Sequence[str]) -> List[str]:
    argv = [executable, "run", fmt, "--lang", language]
    if policy is not None:
        argv += ["--policy", policy]
    if timeout is not None:
        argv += ["--timeout", _timeout_arg(timeout)]
    if session is not None:
        argv += ["--session", session]
    if artifacts is not None:
        argv += ["--artifacts", os.fspath(artifacts)]
    for p in input_paths:
        argv += ["--input", p]
    argv += list(extra)
    argv.append("-")  # the code comes on standard input
    return argv


class _Inputs:
    """Input files: paths are passed as they are; a mapping name -> content
    is written to a private temporary directory for the run."""

    def __init__(self, inputs: Inputs):
        self.dir: Optional[tempfile.TemporaryDirectory] = None
        self.paths: List[str] = []
        if inputs is None:
            return
        if isinstance(inputs, Mapping):
            self.dir = tempfile.TemporaryDirectory(prefix="sbx-in-")
            try:
                for name, content in inputs.items():
                    if os.sep in name or name in ("", ".", ".."):
                        raise ValueError("inputs: %r is not a file name" % (name,))
                    path = os.path.join(self.dir.name, name)
                    with open(path, "wb") as f:
                        f.write(content.encode() if isinstance(content, str) else content)
                    self.paths.append(path)
            except BaseException:
                self.close()
                raise
        else:
            self.paths = [os.fspath(p) for p in inputs]

    def close(self) -> None:
        if self.dir is not None:
            self.dir.cleanup()


def _result(doc: Any, status: int, stderr: str) -> Result:
    try:
        res = Result.from_json(doc)
    except (ValueError, TypeError, KeyError) as e:
        raise Error("setup", "sbx printed no result (%s); its stderr: %s"
                    % (e, stderr.strip()[-500:] or "nothing"), status=status) from None
    if res.schema_version is not None:
        try:
            major = int(res.schema_version.split(".")[0])
        except ValueError:
            major = -1
        if major != SCHEMA_MAJOR:
            raise Error("schema", "result schema_version %s, this module reads %d.x"
                        % (res.schema_version, SCHEMA_MAJOR), result=res, status=status)
    if res.outcome == "sandbox_error":
        e = res.error
        raise Error(e.code if e else "setup", (e.message if e else None) or "sbx failed",
                    e.hint if e else None, res, status)
    return res


def run(code: Union[str, bytes], language: str = "python", policy: Optional[str] = None,
        timeout: Union[int, float, str, None] = None, inputs: Inputs = None,
        session: Optional[str] = None, artifacts: Optional[str] = None,
        executable: Optional[str] = None, extra_args: Sequence[str] = ()) -> Result:
    """Run code once in the sandbox and return its Result.

    language: a language of sbx.conf (python, sh, ...); policy: a policy
    name (default: the administrator's default); timeout: seconds (a
    number, fractions allowed) or a duration string ("10m"), which can only
    tighten the policy's; inputs: a mapping name -> content (str or bytes)
    or a list of paths, read-only under /in; session: a /work directory
    kept between runs; artifacts: a directory to save /out's files into.
    executable: the sbx command (default $SBX or "sbx").
    Raises Error when sbx itself fails (Error.code from sbx(1) ERRORS)."""
    exe = executable or os.environ.get("SBX", "sbx")
    ins = _Inputs(inputs)
    try:
        argv = _argv(exe, "--json", language, policy, timeout, session, artifacts, ins.paths,
                     extra_args)
        try:
            p = subprocess.run(argv, input=code.encode() if isinstance(code, str) else code,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        except OSError as e:
            raise Error("setup", "cannot run %s: %s" % (exe, e.strerror)) from None
    finally:
        ins.close()
    err = p.stderr.decode(errors="replace")
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return _result(doc, p.returncode, err)


def stream(code: Union[str, bytes], language: str = "python", policy: Optional[str] = None,
           timeout: Union[int, float, str, None] = None, inputs: Inputs = None,
           session: Optional[str] = None, artifacts: Optional[str] = None,
           executable: Optional[str] = None, extra_args: Sequence[str] = ()) -> Iterator[Event]:
    """Like run(), as the events of `sbx run --jsonl` while they happen:
    stdout and stderr chunks, then one result event (its .result is the
    Result). Raises Error, as run() does, when sbx itself fails. Closing
    the iterator early stops the run (sbx gets SIGTERM)."""
    exe = executable or os.environ.get("SBX", "sbx")
    ins = _Inputs(inputs)
    argv = _argv(exe, "--jsonl", language, policy, timeout, session, artifacts, ins.paths,
                 extra_args)
    try:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    except OSError as e:
        ins.close()
        raise Error("setup", "cannot run %s: %s" % (exe, e.strerror)) from None
    done = False
    try:
        assert p.stdin is not None and p.stdout is not None
        try:
            p.stdin.write(code.encode() if isinstance(code, str) else code)
            p.stdin.close()
        except BrokenPipeError:
            pass
        for line in p.stdout:
            try:
                raw = json.loads(line)
            except ValueError:
                continue
            kind = raw.get("event", "")
            if kind == "result":
                p.wait()
                err = p.stderr.read().decode(errors="replace") if p.stderr else ""
                done = True
                yield Event(kind, None, _result(raw.get("result"), p.returncode, err), raw)
                return
            res = Result.from_json(raw["result"]) if isinstance(raw.get("result"), dict) else None
            yield Event(kind, raw.get("data"), res, raw)
        p.wait()
        err = p.stderr.read().decode(errors="replace") if p.stderr else ""
        done = True
        raise Error("setup", "sbx ended (status %s) without a result event; its stderr: %s"
                    % (p.returncode, err.strip()[-500:] or "nothing"), status=p.returncode)
    finally:
        if not done and p.poll() is None:
            p.terminate()
            p.wait()
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
        ins.close()
