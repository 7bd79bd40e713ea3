"""pip's build of the package (bloomkit_build.py): it names, in one line,
the first thing a Python lacks to build the extension."""
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bloomkit_build  # noqa: E402  (bindings/python, beside pyproject.toml)


class MissingTest(unittest.TestCase):
    def fails_with(self, *patches):
        with tempfile.TemporaryDirectory() as out:
            for p in patches:
                p.start()
            try:
                with self.assertRaises(SystemExit) as cm:
                    bloomkit_build.build_wheel(out)
            finally:
                for p in patches:
                    p.stop()
            self.assertEqual(os.listdir(out), [])  # no wheel left behind
        message = str(cm.exception)
        self.assertNotIn("\n", message)
        self.assertTrue(message.startswith("bloomkit: "), message)
        return message

    def test_each_missing_piece_is_named_in_one_line(self):
        with tempfile.TemporaryDirectory() as empty:
            headers = mock.patch.object(bloomkit_build.sysconfig, "get_paths",
                                        return_value={"include": empty})
            self.assertIn("Python.h", self.fails_with(headers))
        nomake = mock.patch.object(bloomkit_build.shutil, "which",
                                   side_effect=lambda t: None if t == "make" else "/bin/" + t)
        self.assertIn("make", self.fails_with(nomake))
        noxxhash = mock.patch.object(bloomkit_build, "_compiles", return_value=False)
        self.assertIn("libxxhash-dev", self.fails_with(noxxhash))
        nocc = mock.patch.dict(os.environ, {"CC": "/nonexistent/cc"})
        self.assertIn("CC=/nonexistent/cc", self.fails_with(nocc))
        pypy = mock.patch.object(bloomkit_build.sys.implementation, "name", "pypy")
        self.assertIn("CPython", self.fails_with(pypy))

    def test_the_wheel_tag_is_this_interpreters(self):
        tag = bloomkit_build._tag()
        self.assertTrue(tag.startswith("cp%d%d-" % sys.version_info[:2]), tag)
        self.assertEqual(bloomkit_build.get_requires_for_build_wheel(), [])


if __name__ == "__main__":
    unittest.main()
