# SPDX-License-Identifier: ISC
"""Typed views of the result JSON of `sbx run --json` (docs/result.schema.json,
sbx(1) "The result"). Every class keeps the member it was made from in
``raw``, so keys added by a newer sbx are never lost."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

#: The result schema's major version this module reads (schema_version
#: "1.x"): a result of another major version raises sbx.Error("schema").
SCHEMA_MAJOR = 1


def _opt_int(v: Any) -> Optional[int]:
    return None if v is None else int(v)


@dataclass(frozen=True)
class Frame:
    """One frame of a parsed traceback, innermost last."""
    file: str
    line: Optional[int]
    function: Optional[str]
    text: Optional[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Frame":
        return cls(d.get("file", ""), _opt_int(d.get("line")), d.get("function"), d.get("text"))


@dataclass(frozen=True)
class Traceback:
    """The interpreter's report of an uncaught exception, parsed."""
    type: Optional[str]
    message: Optional[str]
    line: Optional[int]
    frames: List[Frame]
    text: str
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> Optional["Traceback"]:
        if d is None:
            return None
        return cls(d.get("type"), d.get("message"), _opt_int(d.get("line")),
                   [Frame.from_json(f) for f in d.get("frames") or []], d.get("text") or "", d)


@dataclass(frozen=True)
class Artifact:
    """A file the program left in /out: path is set when --artifacts saved it."""
    name: str
    size: int
    media_type: str
    sha256: str
    path: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Artifact":
        return cls(d["name"], int(d["size"]), d["media_type"], d["sha256"], d.get("path"), d)


@dataclass(frozen=True)
class ErrorInfo:
    """The result's error member (PLAN.md "Conventions", sbx(1) ERRORS):
    code from sbx's error-code table, a one-line message in the caller's
    units, type (the exception type for a traceback, else the code) and an
    optional hint."""
    code: str
    message: Optional[str]
    type: Optional[str]
    hint: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> Optional["ErrorInfo"]:
        if d is None:
            return None
        # results of an sbx older than the error-code table carry only type
        code = d.get("code") or d.get("type") or "unknown"
        return cls(code, d.get("message"), d.get("type"), d.get("hint"), d)


@dataclass(frozen=True)
class Audit:
    """Where the run's records are in the audit log (sbx-audit show ID)."""
    start_seq: Optional[int]
    end_seq: Optional[int]
    chain: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Optional[Dict[str, Any]]) -> Optional["Audit"]:
        if d is None:
            return None
        return cls(_opt_int(d.get("start_seq")), _opt_int(d.get("end_seq")), d.get("chain"), d)


@dataclass(frozen=True)
class Result:
    """One run. outcome is one of sbx's outcomes (ok, error, timeout,
    cpu_limit, memory_limit, pids_limit, output_limit, signal,
    sandbox_error, ...); times in milliseconds, sizes in bytes."""
    id: Optional[str]
    outcome: str
    exit_code: Optional[int]
    signal: Optional[int]
    signal_name: Optional[str]
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    wall_ms: int
    cpu_ms: int
    memory_peak_bytes: int
    pids_peak: int
    traceback: Optional[Traceback]
    artifacts: List[Artifact]
    policy: Optional[str]
    limits: Dict[str, Any]
    limit: Optional[str]
    language: Optional[str]
    session: Optional[str]
    attempt: int
    error: Optional[ErrorInfo]
    audit: Optional[Audit]
    schema_version: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Result":
        if not isinstance(d, dict) or not isinstance(d.get("outcome"), str):
            raise ValueError("not an sbx result: no outcome")
        return cls(
            id=d.get("id"), outcome=d["outcome"], exit_code=_opt_int(d.get("exit_code")),
            signal=_opt_int(d.get("signal")), signal_name=d.get("signal_name"),
            stdout=d.get("stdout") or "", stderr=d.get("stderr") or "",
            stdout_truncated=bool(d.get("stdout_truncated")),
            stderr_truncated=bool(d.get("stderr_truncated")),
            wall_ms=int(d.get("wall_ms") or 0), cpu_ms=int(d.get("cpu_ms") or 0),
            memory_peak_bytes=int(d.get("memory_peak_bytes") or 0),
            pids_peak=int(d.get("pids_peak") or 0),
            traceback=Traceback.from_json(d.get("traceback")),
            artifacts=[Artifact.from_json(a) for a in d.get("artifacts") or []],
            policy=d.get("policy"), limits=dict(d.get("limits") or {}), limit=d.get("limit"),
            language=d.get("language"), session=d.get("session") or None,
            attempt=int(d.get("attempt") or 1), error=ErrorInfo.from_json(d.get("error")),
            audit=Audit.from_json(d.get("audit")), schema_version=d.get("schema_version"), raw=d)
