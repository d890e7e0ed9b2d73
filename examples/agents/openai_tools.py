#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""execute_code as a tool of an OpenAI-style function-calling loop.

The tool definition (TOOL) is what a chat-completions API takes in
`tools=[...]`; run_tool_call() answers one `tool_calls` entry with
sbx.run(). With --model stub (the default) a scripted stand-in model plays
the assistant, so the loop runs with no network and no API key; pass any
object with the same create(messages, tools) method to use a real client.

    python3 examples/agents/openai_tools.py "What is 6*7? Use Python."
"""
import json
import sys

import sbx

TOOL = {
    "type": "function",
    "function": {
        "name": "execute_code",
        "description": "Run code in the sbx sandbox (no network, read-only system, "
                       "limits from the administrator's policy) and return its "
                       "outcome, output and parsed traceback.",
        "parameters": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The program text."},
                "language": {"type": "string", "description": "python (default), sh, ..."},
                "timeout": {"type": "number", "description": "Wall-clock limit in seconds."},
            },
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}


def run_tool_call(call):
    """One tool call {"id", "function": {"name", "arguments": JSON text}}
    -> the "tool" message that answers it. sbx's own failures (a refused
    limit, a set-up problem) are answered too, with their error code, so
    the model can correct itself."""
    args = json.loads(call["function"]["arguments"])
    try:
        r = sbx.run(args["code"], language=args.get("language", "python"),
                    timeout=args.get("timeout"))
        content = {"outcome": r.outcome, "exit_code": r.exit_code, "stdout": r.stdout,
                   "stderr": r.stderr[-4000:],
                   "error": None if r.error is None else
                   {"code": r.error.code, "type": r.error.type, "message": r.error.message}}
    except sbx.Error as e:
        content = {"outcome": "sandbox_error", "error": {"code": e.code, "message": e.message,
                                                         "hint": e.hint}}
    return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(content)}


class StubModel:
    """Scripted assistant: first asks for code to be run, then answers
    with what the tool printed. Same shape as a chat-completions message."""

    def create(self, messages, tools):
        assert tools[0]["function"]["name"] == "execute_code"
        tool_msgs = [m for m in messages if m["role"] == "tool"]
        if not tool_msgs:
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "execute_code",
                             "arguments": json.dumps({"code": "print(6*7)"})}}]}
        out = json.loads(tool_msgs[-1]["content"])
        answer = (out.get("stdout") or "").strip() or "the run failed: %s" % out.get("error")
        return {"role": "assistant", "content": "The answer is %s." % answer}


def chat(model, question, max_turns=5):
    """The function-calling loop: ask, run every tool call, hand the
    results back, until the model answers in text."""
    messages = [{"role": "user", "content": question}]
    for _ in range(max_turns):
        msg = model.create(messages, [TOOL])
        messages.append(msg)
        if not msg.get("tool_calls"):
            return msg["content"], messages
        for call in msg["tool_calls"]:
            messages.append(run_tool_call(call))
    raise RuntimeError("no answer after %d turns" % max_turns)


if __name__ == "__main__":
    answer, _ = chat(StubModel(), " ".join(sys.argv[1:]) or "What is 6*7?")
    print(answer)
