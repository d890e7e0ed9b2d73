# SPDX-License-Identifier: ISC
"""Tests of the sbx Python package against a stand-in sbx command
(tests/fake_sbx.py): argv building, typed results, errors, streaming,
inputs. tests/integration/55-python.t runs the same API against a real
setuid install. Run by `make check-python` (part of `make check`)."""
import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import sbx  # noqa: E402

FAKE = os.path.join(HERE, "fake_sbx.py")


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "log.json")
        os.environ["FAKE_SBX_LOG"] = self.log
        os.environ["SBX"] = FAKE

    def tearDown(self):
        self.tmp.cleanup()

    def logged(self):
        with open(self.log) as f:
            return json.load(f)


class RunTest(Base):
    def test_ok_result_is_typed(self):
        r = sbx.run("ok")
        self.assertTrue(r.ok)
        self.assertEqual(r.stdout, "42\n")
        self.assertIsInstance(r.wall_ms, int)
        self.assertIsNone(r.error)
        self.assertEqual(r.artifacts[0].media_type, "image/png")
        self.assertEqual(r.audit.end_seq, 2)
        self.assertEqual(r.schema_version, "1.0")
        self.assertEqual(r.raw["limits"], {"wall_time_ms": 30000})

    def test_argv_and_code_on_stdin(self):
        sbx.run("ok", language="sh", policy="strict", timeout=2.5, session="s1",
                artifacts="/tmp/out")
        d = self.logged()
        self.assertEqual(d["argv"], ["run", "--json", "--lang", "sh", "--policy", "strict",
                                     "--timeout", "2500ms", "--session", "s1",
                                     "--artifacts", "/tmp/out", "-"])
        self.assertEqual(d["code"], "ok")

    def test_timeout_forms(self):
        sbx.run("ok", timeout="10m")
        self.assertIn("10m", self.logged()["argv"])
        sbx.run("ok", timeout=0.0001)
        self.assertIn("1ms", self.logged()["argv"])
        with self.assertRaises(ValueError):
            sbx.run("ok", timeout=0)
        with self.assertRaises(TypeError):
            sbx.run("ok", timeout=True)

    def test_payload_failure_is_a_result(self):
        r = sbx.run("fail")
        self.assertFalse(r.ok)
        self.assertEqual(r.outcome, "error")
        self.assertEqual(r.error.code, "error")
        self.assertEqual(r.error.type, "ZeroDivisionError")
        self.assertEqual(r.traceback.frames[0].line, 1)

    def test_sbx_failure_raises_with_code(self):
        with self.assertRaises(sbx.Error) as cm:
            sbx.run("refuse")
        e = cm.exception
        self.assertEqual(e.code, "limit_above_policy")
        self.assertIn("30s", e.message)
        self.assertEqual(e.hint, "ask for at most 30s")
        self.assertEqual(e.status, 77)
        self.assertEqual(e.result.outcome, "sandbox_error")

    def test_no_json_raises_setup(self):
        with self.assertRaises(sbx.Error) as cm:
            sbx.run("garbage")
        self.assertEqual(cm.exception.code, "setup")
        self.assertIn("something broke", cm.exception.message)

    def test_missing_command_raises_setup(self):
        with self.assertRaises(sbx.Error) as cm:
            sbx.run("ok", executable=os.path.join(self.tmp.name, "nope"))
        self.assertEqual(cm.exception.code, "setup")

    def test_other_schema_major_refused(self):
        with self.assertRaises(sbx.Error) as cm:
            sbx.run("v9")
        self.assertEqual(cm.exception.code, "schema")

    def test_inputs_mapping_written_then_removed(self):
        sbx.run("ok", inputs={"a.csv": "x,y\n", "b.bin": b"\x00\x01"})
        d = self.logged()
        self.assertEqual(d["inputs"], {"a.csv": "x,y\n", "b.bin": "\x00\x01"})
        paths = [d["argv"][i + 1] for i, a in enumerate(d["argv"]) if a == "--input"]
        self.assertEqual(len(paths), 2)
        self.assertFalse(any(os.path.exists(p) for p in paths))

    def test_inputs_paths_passed_as_given(self):
        p = os.path.join(self.tmp.name, "data.txt")
        with open(p, "w") as f:
            f.write("hello")
        sbx.run("ok", inputs=[p])
        self.assertEqual(self.logged()["inputs"], {"data.txt": "hello"})

    def test_bad_input_name(self):
        with self.assertRaises(ValueError):
            sbx.run("ok", inputs={"../x": "no"})


class StreamTest(Base):
    def test_events_then_result(self):
        evs = list(sbx.stream("ok"))
        self.assertEqual([e.kind for e in evs], ["stdout", "result"])
        self.assertEqual(evs[0].data, "42\n")
        self.assertTrue(evs[-1].result.ok)
        self.assertIn("--jsonl", self.logged()["argv"])

    def test_sbx_failure_raises(self):
        with self.assertRaises(sbx.Error) as cm:
            list(sbx.stream("refuse"))
        self.assertEqual(cm.exception.code, "limit_above_policy")

    def test_no_result_event_raises(self):
        with self.assertRaises(sbx.Error):
            list(sbx.stream("garbage"))

    def test_closing_early_stops_the_run(self):
        t0 = time.monotonic()
        it = sbx.stream("slow")
        first = next(it)
        self.assertEqual(first.data, "0\n")
        it.close()
        self.assertLess(time.monotonic() - t0, 5)


if __name__ == "__main__":
    unittest.main()
