# SPDX-License-Identifier: ISC
"""The agent examples (examples/agents/) run their stub-model loops
against the stand-in sbx (tests/fake_sbx.py): no network, no model."""
import importlib.util
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SRC, "examples", "agents",
                                                                      name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


class Examples(unittest.TestCase):
    def setUp(self):
        os.environ["SBX"] = os.path.join(HERE, "fake_sbx.py")
        os.environ.pop("FAKE_SBX_LOG", None)

    def test_openai_loop(self):
        m = load("openai_tools")
        # the stub asks for print(6*7); the stand-in sbx answers like a plain ok run
        answer, msgs = m.chat(m.StubModel(), "6*7?")
        self.assertEqual([x["role"] for x in msgs], ["user", "assistant", "tool", "assistant"])
        self.assertEqual(json.loads(msgs[2]["content"])["outcome"], "ok")
        self.assertTrue(answer.startswith("The answer is"))

    def test_openai_refusal_reaches_the_model(self):
        m = load("openai_tools")
        call = {"id": "c", "function": {"name": "execute_code",
                                        "arguments": json.dumps({"code": "refuse"})}}
        out = json.loads(m.run_tool_call(call)["content"])
        self.assertEqual(out["error"]["code"], "limit_above_policy")

    def test_langchain_stand_in(self):
        m = load("langchain_tool")
        real = m.make_tool()[1]
        tool = m._StandInTool(m.execute_code, "execute_code", m.DESCRIPTION)
        self.assertEqual(m.agent(m.StubModel(), tool, "10!?"), "10! = ")
        if real:  # with LangChain installed the real tool runs the same loop
            self.assertEqual(m.agent(m.StubModel(), m.make_tool()[0], "10!?"), "10! = ")


if __name__ == "__main__":
    unittest.main()
