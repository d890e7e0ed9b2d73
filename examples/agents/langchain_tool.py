#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""execute_code as a LangChain tool.

With langchain-core installed (it is not packaged in Debian 12: pip
install langchain-core), make_tool() returns a real
langchain_core.tools.StructuredTool, ready for a chat model's bind_tools()
or an agent. Without it, the same function is wrapped in a small stand-in
with the part of the tool interface used here (name, description, args,
invoke), so the example still runs. A scripted stub model plays the
assistant (tool calls in LangChain's AIMessage.tool_calls shape: name,
args, id): no network, no API key.

    python3 examples/agents/langchain_tool.py
"""
import json

import sbx

DESCRIPTION = ("Run code in the sbx sandbox (no network, read-only system, limits from "
               "the administrator's policy). Returns JSON: outcome, exit_code, stdout, "
               "stderr, error {code, type, message}.")


def execute_code(code: str, language: str = "python", timeout: float = 30.0) -> str:
    """Run code in the sandbox; the tool's result is JSON text."""
    try:
        r = sbx.run(code, language=language, timeout=timeout)
        return json.dumps({"outcome": r.outcome, "exit_code": r.exit_code, "stdout": r.stdout,
                           "stderr": r.stderr[-4000:],
                           "error": None if r.error is None else
                           {"code": r.error.code, "type": r.error.type,
                            "message": r.error.message}})
    except sbx.Error as e:
        return json.dumps({"outcome": "sandbox_error",
                           "error": {"code": e.code, "message": e.message, "hint": e.hint}})


class _StandInTool:
    """The slice of LangChain's BaseTool interface this example uses."""

    def __init__(self, func, name, description):
        self.func, self.name, self.description = func, name, description
        self.args = {"code": {"type": "string"}, "language": {"type": "string"},
                     "timeout": {"type": "number"}}

    def invoke(self, tool_input):
        return self.func(**tool_input)


def make_tool():
    """(tool, True) with LangChain, (stand-in, False) without it."""
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        return _StandInTool(execute_code, "execute_code", DESCRIPTION), False
    return StructuredTool.from_function(func=execute_code, name="execute_code",
                                        description=DESCRIPTION), True


class StubModel:
    """Scripted chat model: one tool call, then a text answer."""

    def invoke(self, messages):
        results = [m for m in messages if m.get("type") == "tool"]
        if not results:
            return {"type": "ai", "content": "", "tool_calls": [
                {"name": "execute_code", "args": {"code": "import math; print(math.factorial(10))"},
                 "id": "call_1"}]}
        out = json.loads(results[-1]["content"])
        return {"type": "ai", "content": "10! = %s" % (out.get("stdout") or "").strip(),
                "tool_calls": []}


def agent(model, tool, question, max_turns=5):
    messages = [{"type": "human", "content": question}]
    for _ in range(max_turns):
        msg = model.invoke(messages)
        messages.append(msg)
        if not msg["tool_calls"]:
            return msg["content"]
        for call in msg["tool_calls"]:
            assert call["name"] == tool.name
            messages.append({"type": "tool", "tool_call_id": call["id"],
                             "content": tool.invoke(call["args"])})
    raise RuntimeError("no answer after %d turns" % max_turns)


if __name__ == "__main__":
    tool, real = make_tool()
    print("(LangChain %s)" % ("StructuredTool" if real else "not installed: stand-in tool"))
    print(agent(StubModel(), tool, "What is 10 factorial?"))
