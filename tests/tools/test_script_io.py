"""tools/script_io.py, what the Python tools share at their edges: text escaped as the C++
tools escape it, a standard output that fails or is missing, warnings as notes, and the
signals that end a run.

Usage: test_script_io.py TOOLS_DIR (run by meson test).
"""
import os
import subprocess
import sys
import unittest

TOOLS = sys.argv[1]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, TOOLS)
import script_io  # noqa: E402


def run_script(body, **kwargs):
    """`body`, Python run with script_io importable, its output captured (standard error unless
    `kwargs` say where it goes)."""
    outputs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.run([sys.executable, "-B", "-c", f"import sys; sys.path.insert(0, {TOOLS!r})\n{body}"],
                          text=True, **outputs)


class Printable(unittest.TestCase):
    # The samples of tests/cpu/test_text.cpp's Printable tests: the two sets agree on them.
    def test_controls_and_invisible_characters_are_escaped_by_their_utf8_bytes(self):
        self.assertEqual(script_io.printable("q\x1b[31mkv\n"), "q\\x1b[31mkv\\x0a")
        self.assertEqual(script_io.printable("\x9b31mRED \x85 \xa0"), "\\xc2\\x9b31mRED \\xc2\\x85 \xa0")
        self.assertEqual(script_io.printable("a\u202eb"), "a\\xe2\\x80\\xaeb")
        self.assertEqual(script_io.printable("\u2066x\u200bM\ufeffM\u061c"),
                         "\\xe2\\x81\\xa6x\\xe2\\x80\\x8bM\\xef\\xbb\\xbfM\\xd8\\x9c")
        self.assertEqual(script_io.printable("a\u2028b\xadc\U000e0001d"),
                         "a\\xe2\\x80\\xa8b\\xc2\\xadc\\xf3\\xa0\\x80\\x81d")
        kept = "\u0645\u200c\u06cc \U0001f468\u200d\U0001f680 \U000e0080 \u2014 \u2030 \u2070 \ufefe"
        self.assertEqual(script_io.printable(kept), kept)

    def test_a_file_names_bytes_that_are_not_utf8_are_escaped(self):
        name = os.fsdecode(b"caf\xe9")  # as Python holds a Latin-1 name: a lone surrogate
        self.assertEqual(script_io.printable(name), "caf\\xe9")


class StandardOutput(unittest.TestCase):
    def test_a_closed_standard_output_exits_2_with_a_message(self):
        r = run_script("import script_io; script_io.run(lambda: script_io.say('done'))",
                       preexec_fn=lambda: os.close(1))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot write standard output: it is closed", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_a_help_that_cannot_be_written_exits_2_with_a_message(self):
        body = "import script_io; script_io.run(lambda: script_io.parser_for('A tool.').parse_args(['--help']))"
        read_end, write_end = os.pipe()
        os.close(read_end)  # a reader gone, as after `| head`
        cases = [("it is closed", dict(preexec_fn=lambda: os.close(1)), "standard output is closed"),
                 ("a reader gone", dict(stdout=write_end), "Broken pipe")]
        if os.access("/dev/full", os.W_OK):
            cases.append(("a full disk", dict(stdout=os.open("/dev/full", os.O_WRONLY)), "No space left on device"))
        for what, outputs, reason in cases:
            with self.subTest(what):
                r = run_script(body, **outputs)
                if "stdout" in outputs:
                    os.close(outputs["stdout"])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"cannot write the help: {reason}", r.stderr)
                self.assertNotIn("Traceback", r.stderr)
        r = run_script(body)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("A tool.", r.stdout)

    def test_a_standard_error_lost_too_changes_no_exit_status(self):
        # `2>&1 | head` after the reader has gone: the message cannot be said either, and the
        # status stayed 1 (the input's) where it is 2; a user error keeps its 1, and a closed
        # standard error sends no message to standard output.
        read_end, write_end = os.pipe()
        os.close(read_end)
        r = run_script("import script_io; script_io.run(lambda: script_io.say('done'))", stdout=write_end, stderr=write_end)
        self.assertEqual(r.returncode, 2)
        user_error = "import script_io\ndef main(): raise script_io.UserError('bad input')\nscript_io.run(main)"
        r = run_script(user_error, stderr=write_end)
        os.close(write_end)
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        r = run_script(user_error, preexec_fn=lambda: os.close(2))
        self.assertEqual((r.returncode, r.stdout), (1, ""))

    def test_a_character_the_outputs_encoding_lacks_is_written_escaped(self):
        r = run_script("import script_io; script_io.run(lambda: script_io.say('caf\\u00e9 \\u2014'))",
                       env=dict(os.environ, PYTHONIOENCODING="ascii"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "caf\\xe9 \\u2014\n")


class Warnings(unittest.TestCase):
    def test_a_warning_in_a_run_is_one_escaped_note_line(self):
        # Python's own form is two lines, the second quoting the line of source that warned.
        r = run_script("import sys, warnings, script_io\n"
                       "sys.argv[0] = 'tool.py'\n"
                       "script_io.run(lambda: warnings.warn('labels do not fit\\x1b[2J'))\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "tool.py: note: labels do not fit\\x1b[2J\n")

    def test_a_standard_error_that_fails_or_is_closed_stops_no_run(self):
        # As with Python's own warnings: the work goes on, and no note goes to standard output.
        body = "import warnings, script_io; script_io.run(lambda: (warnings.warn('w'), script_io.say('done')))"
        with open("/dev/full", "w") as full:
            r = run_script(body, stderr=full)
        self.assertEqual((r.returncode, r.stdout), (0, "done\n"))
        r = run_script(body, preexec_fn=lambda: os.close(2))
        self.assertEqual((r.returncode, r.stdout), (0, "done\n"))


class Signals(unittest.TestCase):
    def test_sigterm_and_ctrl_c_end_a_run_with_their_statuses_after_its_cleanup(self):
        for name, status in (("SIGTERM", 143), ("SIGINT", 130)):
            r = run_script("import os, signal, time, script_io\n"
                           "def main():\n"
                           "    try:\n"
                           f"        os.kill(os.getpid(), signal.{name}); time.sleep(30)\n"
                           "    finally:\n"
                           "        print('cleaned up')\n"
                           "script_io.run(main)\n", timeout=60)
            self.assertEqual(r.returncode, status, r.stderr)
            self.assertEqual(r.stdout, "cleaned up\n")
            self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
