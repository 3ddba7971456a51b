"""sass_loop_cost.py on hand-written SASS listings: it finds the loop with the most FFMAs, and
its counts, stall cycles and bank conflicts follow from the listing; bad input exits 1.

Usage: test_sass_loop_cost.py TOOLS_DIR (run by meson test).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = sys.argv[1]


def line(address, text, stall):
    """One instruction as cuobjdump prints it: the text with the low word, then the control
    word (stall count in bits 41-44) on a line of its own."""
    return (f"        /*{address:04x}*/                   {text} ;   /* 0x0000000000000000 */\n"
            f"                                                               /* 0x{stall << 41:016x} */\n")


def listing(name, instructions):
    return f"\n\tFunction : {name}\n" + "".join(line(a, t, s) for a, t, s in instructions)


# The loop 0x10..0x70 (4 FFMA); a smaller loop 0x80..0x90 (1 FFMA) that is not the hot one.
#   0x10 FFMA R10 <- R2.reuse, R4, R10: nothing cached; R2, R4, R10 all in bank 0: 2 conflicts
#   0x20 FFMA R11 <- R2, R6, R11: R2 from the reuse cache; R6 bank 0, R11 bank 1: none
#   0x30 FFMA R12 <- R3, R5, R13: R3, R5, R13 all in bank 1: 2 conflicts
#   0x40 LDS.128, 0x50 LDGSTS, 0x58 a 16-byte evict-first global load: not FFMAs, and they
#        break the reuse chain (0x5c, a 4-byte load, is not counted as a 16-byte one)
#   0x60 FFMA R14 <- R8.reuse, R8, R14: R8 counted once; R8, R14 bank 0: 1 conflict
#   0x70 the branch back
HOT = [
    (0x00, "MOV R1, c[0x0][0x28]", 1),
    (0x10, "FFMA R10, R2.reuse, R4, R10", 1),
    (0x20, "FFMA R11, R2, R6, R11", 2),
    (0x30, "FFMA R12, R3, R5, R13", 1),
    (0x40, "LDS.128 R20, [R30]", 1),
    (0x50, "LDGSTS.E.BYPASS.128 [R40], desc[UR4][R42.64]", 1),
    (0x58, "LDG.E.EF.128.CONSTANT R44, desc[UR4][R46.64]", 1),
    (0x5c, "LDG.E R48, desc[UR4][R46.64]", 1),
    (0x60, "FFMA R14, R8.reuse, R8, R14", 1),
    (0x70, "@P0 BRA 0x10", 5),
    (0x80, "FFMA R15, R9, R7, R15", 1),
    (0x90, "@P1 BRA 0x80", 3),
    (0xa0, "EXIT", 1),
]


def run_on(path, *args, **output):
    """The script on the file `path`; its output captured, unless `output` says where it goes."""
    return subprocess.run([sys.executable, os.path.join(TOOLS, "sass_loop_cost.py"), path, *args], text=True,
                          **(output or {"capture_output": True}))


def run(text, *args, mode="w", **output):
    """The script on a file that holds `text`."""
    with tempfile.NamedTemporaryFile(mode, suffix=".sass", delete=False) as f:
        f.write(text)
    try:
        return run_on(f.name, *args, **output)
    finally:
        os.unlink(f.name)


class SassLoopCost(unittest.TestCase):
    def test_counts_the_loop_with_the_most_ffmas(self):
        r = run(listing("_Z6kernelv", HOT), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(got["kernel"], "_Z6kernelv")
        self.assertEqual(got["instructions"], 9)
        self.assertEqual(got["ffma"], 4)
        self.assertEqual(got["lds128"], 1)
        self.assertEqual(got["ldg128"], 1)
        self.assertEqual(got["ldgsts"], 1)
        self.assertEqual(got["local"], 0)
        self.assertEqual(got["stall_cycles"], 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 5)
        self.assertEqual(got["bank_conflicts"], 2 + 0 + 2 + 1)
        self.assertEqual(got["cost"], got["stall_cycles"] + got["bank_conflicts"])

    def test_a_reuse_flag_without_the_same_register_next_saves_nothing(self):
        # R2.reuse in slot 0, then R3 in slot 0: the second FFMA reads all three sources.
        body = [(0x10, "FFMA R10, R2.reuse, R4, R10", 1), (0x20, "FFMA R12, R3, R5, R13", 1), (0x30, "BRA 0x10", 1)]
        got = json.loads(run(listing("k", body), "--json").stdout)
        self.assertEqual(got["bank_conflicts"], 2 + 2)

    def test_the_same_register_without_a_reuse_flag_is_read_again(self):
        # R2 in slot 0 twice, but no .reuse: the second FFMA reads R2, R6 (bank 0) and R11.
        body = [(0x10, "FFMA R10, R2, R5, R11", 1), (0x20, "FFMA R11, R2, R6, R11", 1), (0x30, "BRA 0x10", 1)]
        got = json.loads(run(listing("k", body), "--json").stdout)
        self.assertEqual(got["bank_conflicts"], 1 + 1)

    def test_spills_in_the_loop_are_counted(self):
        body = [(0x10, "FFMA R10, R2, R5, R10", 1), (0x20, "STL [R1], R2", 1), (0x30, "LDL R3, [R1]", 1),
                (0x40, "BRA 0x10", 1)]
        got = json.loads(run(listing("k", body), "--json").stdout)
        self.assertEqual(got["local"], 2)

    def test_every_kernel_of_a_listing_is_reported(self):
        r = run(listing("first", HOT) + listing("second", HOT[1:10]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("first", r.stdout)
        self.assertIn("second", r.stdout)
        self.assertIn("4 FFMA (44.4%), 1 LDS.128, 1 LDG.128, 1 LDGSTS", r.stdout)
        self.assertIn("static cost 19 = 14 stall cycles + 5 bank conflicts", r.stdout)

    def test_a_kernel_without_a_loop_is_said_in_its_place_and_the_others_still_reported(self):
        straight = [(0x10, "FFMA R10, R2, R4, R10", 1), (0x20, "EXIT", 1)]
        r = run(listing("straight", straight) + listing("second", HOT), "--json")
        self.assertEqual(r.returncode, 1)
        first, second = (json.loads(x) for x in r.stdout.splitlines())
        self.assertEqual(first, {"kernel": "straight", "arch": None, "error": "no backward branch, so no loop to measure"})
        self.assertEqual(second["ffma"], 4)

    def test_each_report_names_the_architecture_of_its_code(self):
        # A fatbin of two architectures dumps one kernel under each "code for" line: the two
        # reports were told apart by nothing.
        dump = "".join(f"\nFatbin elf code:\n================\narch = {arch}\n\n\tcode for {arch}\n\t.target\t{arch}\n"
                       + listing("k", HOT) for arch in ("sm_80", "sm_90"))
        r = run(dump, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([json.loads(x)["arch"] for x in r.stdout.splitlines()], ["sm_80", "sm_90"])
        r = run(dump)
        self.assertEqual([x for x in r.stdout.splitlines() if not x.startswith(" ")], ["k (sm_80)", "k (sm_90)"])
        # A listing that names none: null, and the name alone.
        self.assertIsNone(json.loads(run(listing("k", HOT), "--json").stdout)["arch"])
        self.assertEqual(run(listing("k", HOT)).stdout.splitlines()[0], "k")

    def test_a_kernel_listed_twice_is_reported_twice(self):
        r = run(listing("k", HOT) + listing("k", HOT[1:10]), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([json.loads(x)["kernel"] for x in r.stdout.splitlines()], ["k", "k"])

    def test_odd_instructions_are_read_without_failing(self):
        # An instruction with no text, one with a predicate alone, and FFMAs whose operand
        # counts differ (the reuse check must not look past the shorter one).
        body = [(0x10, "", 1), (0x20, "@P0", 1), (0x30, "FFMA R1, R2, R3", 1), (0x40, "FFMA R1, R2.reuse, R3, R5", 1),
                (0x50, "BRA 0x10", 1)]
        r = run(listing("k", body), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["ffma"], 2)

    def test_bad_input_exits_1_with_a_message(self):
        r = run("not a listing\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no SASS instructions", r.stderr)
        r = run(listing("straight", [(0x10, "FFMA R10, R2, R4, R10", 1), (0x20, "EXIT", 1)]))
        self.assertEqual(r.returncode, 1)
        self.assertIn("straight\n  no backward branch", r.stdout)
        r = run(b"\x7fELF\x02\x01\x01\x00\xff\xfe", mode="wb")  # a cubin
        self.assertEqual(r.returncode, 1)
        self.assertIn("not text (a cubin?", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        r = run_on("/nonexistent.sass")
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot read", r.stderr)

    def test_names_reach_the_terminal_escaped(self):
        # A kernel's name and a file's name are text from elsewhere: an escape sequence in one
        # would restyle the terminal, a newline start a line of its own.
        r = run(listing("evil\x1b[31mRED\u202e", HOT))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("evil\\x1b[31mRED\\xe2\\x80\\xae\n", r.stdout)
        self.assertNotIn("\x1b", r.stdout)
        r = run_on("/nonexistent\x1b[31m\n.sass")
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot read /nonexistent\\x1b[31m\\x0a.sass", r.stderr)

    def test_a_standard_output_that_fails_exits_2_with_a_message(self):
        with open("/dev/full", "w") as full:
            r = run(listing("k", HOT), stdout=full, stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("sass_loop_cost.py: cannot write standard output: No space left on device", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotIn("Exception ignored", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
