"""The plot scripts on small JSON fixtures: they write their files, their numbers follow from
the input, and bad input exits 1 with a message.

Usage: test_plots.py TOOLS_DIR FIXTURES_DIR SGEMM_ROOFLINE (run by meson test with the project's
python, the one with matplotlib).
"""
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import warnings

TOOLS, FIXTURES, SGEMM_ROOFLINE = sys.argv[1:4]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, TOOLS)
import plot_bench  # noqa: E402
import plot_roofline  # noqa: E402
import plotting  # noqa: E402

BENCH_4096 = os.path.join(FIXTURES, "bench4096_h200.json")
BENCH_SWEEP = os.path.join(FIXTURES, "bench_sweep_h200.json")
TUNE_TABLE = os.path.join(FIXTURES, "tune_table_synthetic.json")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(script, *args, env=None):
    return subprocess.run([sys.executable, os.path.join(TOOLS, script), *args], capture_output=True, text=True,
                          env=env)


def load(path):
    with open(path) as f:
        return json.load(f)


def stderr_of(call):
    """What call() writes to sys.stderr."""
    with tempfile.TemporaryFile("w+") as err:
        saved, sys.stderr = sys.stderr, err
        try:
            call()
        finally:
            sys.stderr = saved
        err.seek(0)
        return err.read()


def figure_that_warns(*messages, category=UserWarning):
    """A figure whose drawing warns each of `messages`, as matplotlib warns of labels it cannot
    fit."""
    plotting.pyplot()
    from matplotlib.artist import Artist  # here: matplotlib is imported when a figure is drawn

    class WarningArtist(Artist):
        def draw(self, renderer):
            for message in messages:
                warnings.warn(message, category)

    fig = plotting.pyplot().figure()
    fig.add_artist(WarningArtist())
    return fig


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.out, name)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def assert_pngs(self, *names):
        for name in names:
            path = os.path.join(self.out, name)
            self.assertTrue(os.path.isfile(path), f"{name} was not written")
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), PNG_MAGIC, f"{name} is not a PNG")

    def assert_user_error(self, result, words):
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(words, result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def assert_environment_error(self, result, words):
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(words, result.stderr)
        self.assertNotIn("Traceback", result.stderr)


class PlotBench(PlotTest):
    def test_one_size_writes_three_pngs(self):
        result = run("plot_bench.py", BENCH_4096, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs("bench_ladder.png", "bench_roofline.png", "bench_sweep.png")

    def test_a_backend_named_by_the_environment_is_not_needed(self):
        # MPLBACKEND=inline (a notebook's) failed with a traceback before Agg was chosen.
        result = run("plot_bench.py", BENCH_4096, "-o", self.out, env=dict(os.environ, MPLBACKEND="inline"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs("bench_ladder.png", "bench_roofline.png", "bench_sweep.png")

    def test_sweep_with_a_chosen_size(self):
        result = run("plot_bench.py", BENCH_SWEEP, "-o", self.out, "--size", "2048")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs("bench_ladder.png", "bench_roofline.png", "bench_sweep.png")
        sizes = ", ".join(str(e["size"]) for e in load(BENCH_SWEEP))
        self.assert_user_error(run("plot_bench.py", BENCH_SWEEP, "-o", self.out, "--size", "999"), sizes)

    def test_an_unknown_gpu_needs_its_ceilings_for_the_roofline_alone(self):
        data = load(BENCH_4096)
        data["gpu"] = "Mystery GPU"
        path = os.path.join(self.out, "mystery.json")
        with open(path, "w") as f:
            json.dump(data, f)
        # The ladder and the sweep need no ceilings: drawn, and the roofline left out, said.
        # (It refused all three.)
        result = run("plot_bench.py", path, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("no built-in ceilings for GPU 'Mystery GPU', so bench_roofline.png is not drawn", result.stderr)
        self.assert_pngs("bench_ladder.png", "bench_sweep.png")
        self.assertFalse(os.path.exists(os.path.join(self.out, "bench_roofline.png")))
        self.assertNotIn("earlier", result.stderr)
        # One ceiling alone asks for the roofline, which needs both.
        self.assert_user_error(run("plot_bench.py", path, "-o", self.out, "--peak-tflops", "10"), "--bandwidth")
        result = run("plot_bench.py", path, "-o", self.out, "--peak-tflops", "10", "--bandwidth", "1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs("bench_roofline.png")
        # Drawn again without ceilings, the folder keeps that roofline: said to be another run's.
        result = run("plot_bench.py", path, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"the earlier bench_roofline.png in {self.out} is of another run", result.stderr)

    def test_a_file_of_two_gpus_or_two_layouts_is_refused(self):
        # They were drawn as one line per kernel, under the first entry's GPU and a title
        # naming one layout.
        entries = load(BENCH_SWEEP)
        two_gpus = [dict(entries[0], gpu="NVIDIA H100 80GB HBM3"), *entries[1:]]
        for script in ("plot_bench.py", "plot_roofline.py"):
            self.assert_user_error(run(script, self.write("gpus.json", two_gpus), "-o", self.out),
                                   "entries of more than one GPU (NVIDIA H100 80GB HBM3, NVIDIA H200)")
        two_layouts = [dict(entries[0], trans="NT"), *entries[1:]]
        self.assert_user_error(run("plot_bench.py", self.write("layouts.json", two_layouts), "-o", self.out),
                               "entries of more than one layout (NN, NT)")
        # Nor are entries that vary in more than the swept size: two shapes at one N (M of 1 and
        # 8 at each of two Ns) were one zigzag line.
        mixed = [dict(entries[i % 2], m=m, n=n, k=4096) for i, (m, n) in enumerate([(1, 4096), (8, 4096), (1, 14336), (8, 14336)])]
        self.assert_user_error(run("plot_bench.py", self.write("mixed.json", mixed), "-o", self.out),
                               "entries that vary in more than N (two shapes at one N)")
        self.assertEqual(sorted(os.listdir(self.out)), ["gpus.json", "layouts.json", "mixed.json"])

    def test_a_wrong_result_has_no_percent_of_cublas_in_the_ladder(self):
        # sgemm-bench gives a wrong result no ratio; the bar said 0.0.
        self.assertEqual(plot_bench.bar_texts([98.76, None, 0.04]), ["98.8", "-", "0.0"])

    def test_a_layout_of_null_is_nn(self):
        data = load(BENCH_4096)
        data["trans"] = None
        self.assertEqual(plot_bench.title(data), "NVIDIA H200, M=4096 N=4096 K=4096")

    def test_bad_input(self):
        path = os.path.join(self.out, "broken.json")
        with open(path, "w") as f:
            f.write('{"gpu": ')
        self.assert_user_error(run("plot_bench.py", path, "-o", self.out), "not valid JSON")
        with open(path, "w") as f:
            json.dump({"gpu": "NVIDIA H200"}, f)
        self.assert_user_error(run("plot_bench.py", path, "-o", self.out), "not sgemm-bench JSON")
        self.assert_user_error(run("plot_bench.py", os.path.join(self.out, "absent.json"), "-o", self.out),
                               "absent.json")
        self.assert_user_error(run("plot_bench.py", BENCH_4096), "-o")
        self.assert_user_error(run("plot_bench.py", BENCH_4096, "-o", self.out, "--bandwidth", "-1"), "--bandwidth")

    def test_fields_of_the_wrong_kind_are_named(self):
        def with_result(**fields):
            data = load(BENCH_4096)
            data["results"][1].update(fields)
            return data
        cases = [
            (with_result(median_ms=None), 'results[1]: "median_ms" must be a positive number below 1e12, not null'),
            (with_result(median_ms=float("nan")), '"median_ms" must be a positive number below 1e12, not NaN'),
            (with_result(tflops=-3.0), '"tflops" must be a positive number below 1e12, not -3.0'),
            # Near the largest float, the axes' padding overflowed matplotlib: a traceback.
            (with_result(tflops=1.7e308), '"tflops" must be a positive number below 1e12, not 1.7e+308'),
            (with_result(pct_cublas=1.7e308), '"pct_cublas" must be a positive number below 1e12 or null, not 1.7e+308'),
            (with_result(kernel=7), '"kernel" must be text, not 7'),
            (dict(load(BENCH_4096), m=True), '"m" must be a positive integer below 2^31, not true'),
            (dict(load(BENCH_4096), results="oops"), '"results" must be a non-empty list'),
            (dict(load(BENCH_4096), gpu=None), '"gpu" must be a GPU\'s name, not null'),
        ]
        for data, words in cases:
            path = self.write("bad.json", data)
            self.assert_user_error(run("plot_bench.py", path, "-o", self.out), words)
            self.assert_user_error(run("plot_roofline.py", path, "-o", self.out), words)
        with open(os.path.join(self.out, "latin1.json"), "wb") as f:
            f.write(b'{"gpu": "\xff"}')
        self.assert_user_error(run("plot_bench.py", os.path.join(self.out, "latin1.json"), "-o", self.out), "not UTF-8")

    def test_input_the_checks_pass_but_the_arithmetic_would_not(self):
        # A config of null, or a tile of 0: the kernel is left off the roofline, not divided by.
        data = load(BENCH_4096)
        data["results"][2]["config"] = None  # smem
        data["results"][3]["config"] = "blocktile BM=0 BN=128"
        result = run("plot_bench.py", self.write("odd.json", data), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr.count("left off the roofline"), 2, result.stderr)
        with open(os.path.join(self.out, "deep.json"), "w") as f:
            f.write("[" * 200000 + "]" * 200000)
        for script in ("plot_bench.py", "plot_roofline.py"):
            self.assert_user_error(run(script, os.path.join(self.out, "deep.json"), "-o", self.out), "nested too deeply")
        # A tile of more digits than any GPU's: no tile, not an overflow.
        data["results"][3]["config"] = "blocktile BM=" + "9" * 400 + " BN=128"
        result = run("plot_bench.py", self.write("odd.json", data), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("blocktile: no tile in", result.stderr)
        # An integer of more digits than Python converts is no JSON it reads.
        with open(os.path.join(self.out, "digits.json"), "w") as f:
            f.write('{"gpu": "NVIDIA H200", "m": 1' + "0" * 5000 + "}")
        for script in ("plot_bench.py", "plot_roofline.py"):
            self.assert_user_error(run(script, os.path.join(self.out, "digits.json"), "-o", self.out), "not valid JSON")
        # A time past what a float holds.
        data["results"][3]["median_ms"] = 10**400
        self.assert_user_error(run("plot_bench.py", self.write("odd.json", data), "-o", self.out),
                               '"median_ms" must be a positive number below 1e12, not 1' + "0" * 56 + "...")
        with open(os.path.join(self.out, "huge.json"), "w") as f:
            f.write('{"gpu": "NVIDIA H200", "m": 1' + "0" * 400 + ', "n": 8, "k": 8, "results": []}')
        self.assert_user_error(run("plot_bench.py", os.path.join(self.out, "huge.json"), "-o", self.out),
                               '"m" must be a positive integer below 2^31')
        self.assert_user_error(run("plot_bench.py", BENCH_4096, "-o", self.out, "--peak-tflops", "1e-300",
                                   "--bandwidth", "1e300"), "it must be between 0.001 and 10000 TFLOPS")

    def test_a_file_or_folder_beside_an_output_is_not_taken_for_its_partial_write(self):
        # A new file is written at a name of its own before its rename: whatever the folder
        # holds beside the outputs stays as it was.
        os.mkdir(os.path.join(self.out, "bench_roofline.png.partial"))
        with open(os.path.join(self.out, "bench_ladder.png.partial"), "w") as f:
            f.write("notes\n")
        result = run("plot_bench.py", BENCH_4096, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs(*plot_bench.OUTPUTS)
        self.assertTrue(os.path.isdir(os.path.join(self.out, "bench_roofline.png.partial")))
        with open(os.path.join(self.out, "bench_ladder.png.partial")) as f:
            self.assertEqual(f.read(), "notes\n")
        self.assertEqual(sorted(os.listdir(self.out)),
                         sorted([*plot_bench.OUTPUTS, "bench_roofline.png.partial", "bench_ladder.png.partial"]))

    def test_a_read_only_file_is_replaced_and_stays_read_only(self):
        # The new file takes the old one's mode once written: taken before, a read-only mode
        # refused the write to a user (root writes a read-only file anyway, so the mode the
        # write meets is what is checked).
        metrics = os.path.join(self.out, "metrics.json")
        with open(metrics, "w") as f:
            f.write("old\n")
        os.chmod(metrics, 0o444)
        modes_met = []

        def write(partial):
            modes_met.append(os.stat(partial).st_mode & 0o777)
            with open(partial, "w") as f:
                f.write("new\n")

        plotting.write_replacing(metrics, write)
        self.assertEqual(modes_met, [0o600], "the write met the read-only mode")
        self.assertEqual(os.stat(metrics).st_mode & 0o777, 0o444)
        with open(metrics) as f:
            self.assertEqual(f.read(), "new\n")

    def test_a_run_stopped_while_writing_leaves_no_partial_file(self):
        # SIGTERM and Ctrl-C reach the write as SystemExit and KeyboardInterrupt (script_io.run).
        for stop in (SystemExit(143), KeyboardInterrupt()):
            def write(partial):
                with open(partial, "w") as f:
                    f.write("half")
                raise stop
            with self.assertRaises(type(stop)):
                plotting.write_replacing(os.path.join(self.out, "metrics.json"), write)
            self.assertEqual(os.listdir(self.out), [])

    def test_partial_files_a_killed_run_left_are_swept_an_hour_on(self):
        # SIGKILL leaves the partial file no handler could remove: the next write of that
        # output removes such files once an hour old, and nothing else.
        def made(name, age_seconds, kind="file"):
            path = os.path.join(self.out, name)
            if kind == "file":
                with open(path, "w") as f:
                    f.write("half")
            elif kind == "folder":
                os.mkdir(path)
            else:  # to an hour-old file: a sweep that followed links would judge it stale
                os.symlink(os.path.join(self.out, "elsewhere"), path)
            then = time.time() - age_seconds
            os.utime(path, (then, then), follow_symlinks=False)
            return name

        old = made(".metrics.json.k3_9zq0a.partial", 2 * 3600)
        kept = [made(".metrics.json.abcd1234.partial", 60),               # a run at work
                made(".metrics.json.abc.partial", 2 * 3600),              # not a name of ours
                made(".other.json.abcd1234.partial", 2 * 3600),           # another output's
                made(".metrics.json.ABCD1234.partial", 2 * 3600),         # not mkstemp's letters
                made(".metrics.json.folder00.partial", 2 * 3600, "folder"),
                made("elsewhere", 2 * 3600),
                made(".metrics.json.link0000.partial", 2 * 3600, "link")]

        def write(partial):
            with open(partial, "w") as f:
                f.write("new\n")

        plotting.write_replacing(os.path.join(self.out, "metrics.json"), write)
        self.assertFalse(os.path.lexists(os.path.join(self.out, old)))
        self.assertEqual(sorted(os.listdir(self.out)), sorted(["metrics.json", *kept]))

    def test_a_name_with_a_dollar_is_drawn_as_it_is_not_as_a_formula(self):
        table = {"gpu": "NVIDIA H200", "shapes": [{"name": "q$\\frac{$kv", "m": 8, "n": 64, "k": 64, "winner": None,
                                                    "cublas_ms": 0.01}]}
        result = run("plot_roofline.py", self.write("dollar.json", table), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(plotting.figure_text("q$\\frac{$kv\x1b"), "q\\$\\frac{\\$kv\\x1b")

    def test_a_name_thousands_of_characters_long_is_drawn_cut_in_its_middle(self):
        # matplotlib failed on a title some 2000 characters long, with a traceback, after the
        # ladder was written and before the roofline was.
        bench = load(BENCH_4096)
        bench["gpu"] = "NVIDIA " + "G" * 3000
        bench["results"][-1]["config"] += " " + "C" * 3000
        result = run("plot_bench.py", self.write("long.json", bench), "-o", self.out, "--peak-tflops", "60",
                     "--bandwidth", "4")
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assert_pngs("bench_ladder.png", "bench_roofline.png", "bench_sweep.png")

        title = plotting.figure_text("NVIDIA " + "G" * 3000 + ", M=4096 N=4096 K=4096 TT")
        self.assertEqual(len(title), plotting.FIGURE_TEXT_LIMIT)
        self.assertTrue(title.startswith("NVIDIA GGG"), title)
        self.assertTrue(title.endswith("GGG, M=4096 N=4096 K=4096 TT"), title)
        self.assertEqual(title.count(plotting.FIGURE_TEXT_CUT), 1, title)
        self.assertEqual(plotting.figure_text("G" * plotting.FIGURE_TEXT_LIMIT), "G" * plotting.FIGURE_TEXT_LIMIT)
        self.assertRegex(plotting.WRITING_AND_EXIT_STATUS, rf"at most {plotting.FIGURE_TEXT_LIMIT}\s+characters")
        # A control character's escape is kept whole or left out, never cut; a $ is escaped after the cut.
        escapes = plotting.figure_text("\x1b" * 100 + "$" * 100)
        self.assertRegex(escapes, r"\A(\\x1b)+\.\.\.(\\\$)+\Z")
        self.assertLessEqual(len(escapes.replace("\\$", "$")), plotting.FIGURE_TEXT_LIMIT)

    def test_a_wrapped_label_breaks_at_spaces_and_never_inside_an_escape(self):
        # The ladder wrapped its labels after the escapes, so a \$ that fell at a line's end
        # showed its backslash there, and a \x1b was split across two lines.
        plain = "BM=128 BN=256 BK=8 WM=64 WN=64 TM=8 TN=16 STAGES=4 ALIGNED=2"
        self.assertEqual(plotting.figure_text(plain, 36), textwrap.fill(plain, 36))
        long_word = "TM=8 " + "x" * 80  # starts in the room left on the first line
        self.assertEqual(plotting.figure_text(long_word, 36), textwrap.fill(long_word, 36))
        for text in ("x" * 35 + "$" * 5, "x" * 34 + "\x1b" * 3 + "  tail", "$" * 100, "\u200b" * 30):
            wrapped = plotting.figure_text(text, 36)
            lines = wrapped.split("\n")
            self.assertGreater(len(lines), 1, wrapped)
            for line in lines:
                self.assertLessEqual(len(line), 36, wrapped)
                self.assertRegex(line, r"\A([^\\]|\\\$|\\x[0-9a-f]{2})+\Z", wrapped)
            # Nothing is lost but the spaces where lines break.
            self.assertEqual(wrapped.replace("\n", "").replace(" ", ""),
                             plotting.figure_text(text).replace(" ", ""), wrapped)
        # A label of such a configuration is drawn.
        bench = load(BENCH_4096)
        bench["results"][-1]["config"] = "x" * 35 + "$" * 5 + " " + "\x1b" * 20
        result = run("plot_bench.py", self.write("wrap.json", bench), "-o", self.out, "--peak-tflops", "60",
                     "--bandwidth", "4")
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assert_pngs("bench_ladder.png", "bench_roofline.png", "bench_sweep.png")

    def test_the_rooflines_labels_stay_inside_the_figure(self):
        # A warptile configuration's label (some 70 characters) ran on past the figure's right
        # edge from its point. Labels are wrapped, and those in the right half go to the left.
        bench = load(BENCH_4096)
        long_configs = ("warptile BM=128 BN=256 BK=8 WM=64 WN=64 TM=8 TN=16 STAGES=4 ALIGNED=2",
                        "warptile BM=256 BN=128 BK=16 WM=64 WN=64 TM=16 TN=8 STAGES=3 ALIGNED=1",
                        "warptile BM=64 BN=64 BK=16 WM=32 WN=32 TM=8 TN=8 STAGES=2 ALIGNED=0")
        bench["results"] += [{**bench["results"][-1], "kernel": "warptile", "config": c} for c in long_configs]
        for m in (4096, 64):  # 64: cuBLAS's point at the problem's intensity, left of the tiles'
            entry = {**bench, "m": m}
            figures = []
            saved = plotting.save

            def keep(fig, directory, name):
                figures.append(fig)
                return saved(fig, directory, name)

            plot_bench.plotting.save = keep
            try:
                plot_bench.plot_roofline(entry, plotting.ceilings_for(bench["gpu"], None, None), self.out)
            finally:
                plot_bench.plotting.save = saved
            fig = figures[0]
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            labels = [t for t in fig.axes[0].texts if "warptile" in t.get_text() or "cublas" in t.get_text()]
            self.assertEqual(len(labels), 1 + len(long_configs), [t.get_text() for t in fig.axes[0].texts])
            for text in labels:
                box = text.get_window_extent(renderer)
                self.assertGreaterEqual(box.x0, fig.bbox.x0, (m, text.get_text()))
                self.assertLessEqual(box.x1, fig.bbox.x1, (m, text.get_text()))

    def test_what_matplotlib_warns_of_is_a_note_naming_the_png(self):
        # Only lines in the script's own words reach the terminal, not a warning's two lines
        # that quote a line of plotting.py or numpy. Each warning is said once, after the file
        # is written, escaped.
        path = os.path.join(self.out, "warned.png")
        notes = stderr_of(lambda: plotting.save(figure_that_warns(*["drawn with a warning\nsecond line"] * 3),
                                                self.out, "warned.png"))
        self.assert_pngs("warned.png")
        prefix = f"{os.path.basename(sys.argv[0])}: note: {path}"
        self.assertEqual(notes, f"{prefix} is written, but: drawn with a warning\\x0asecond line\n")
        # Past a few, a count: a name in a script the font lacks warns once a character.
        many = [f"Glyph {i} missing from current font." for i in range(plotting.NOTES_PER_FILE + 3)]
        notes = stderr_of(lambda: plotting.save(figure_that_warns(*many), self.out, "warned.png"))
        self.assertEqual(notes.splitlines(), [f"{prefix} is written, but: {m}" for m in many[:plotting.NOTES_PER_FILE]]
                         + [f"{prefix}: and 3 more warnings"])
        # What the warnings filters hide stays hidden: Python's defaults hide a library's
        # DeprecationWarning (unittest shows it; the filter here stands for Python's or -W's).
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            notes = stderr_of(lambda: plotting.save(figure_that_warns("old", category=DeprecationWarning), self.out,
                                                    "warned.png"))
        self.assertEqual(notes, "")
        # A kernel's name in a script the font lacks (matplotlib's own DejaVu Sans has no CJK):
        # matplotlib's warnings, as the figure is drawn and saved. (A value near the largest
        # float did it too, before such values were refused.)
        bench = load(BENCH_4096)
        bench["results"][1]["kernel"] = "\u4e2d\u6587"
        result = run("plot_bench.py", self.write("glyphs.json", bench), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stderr, r"plot_bench.py: note: \S+bench_ladder.png is written, but: Glyph 20013")
        self.assertTrue(all(line.startswith("plot_bench.py: note: ") for line in result.stderr.splitlines()),
                        result.stderr)

    def test_a_size_of_more_results_than_the_ladder_can_draw_is_refused_before_any_file(self):
        # A row a result: past LADDER_MOST_RESULTS the ladder would be an image of 2^16 pixels or
        # more on a side, which matplotlib refused with a traceback, the other plots not drawn.
        def height(rows):
            return (plot_bench.LADDER_HEADER_INCHES + plot_bench.LADDER_ROW_INCHES * rows) * plotting.PNG_DPI

        self.assertLess(height(plot_bench.LADDER_MOST_RESULTS), plotting.PNG_MOST_PIXELS)
        self.assertGreaterEqual(height(plot_bench.LADDER_MOST_RESULTS + 1), plotting.PNG_MOST_PIXELS)
        bench = load(BENCH_4096)
        last = bench["results"][-1]
        bench["results"] = [dict(last, config=f"{last['config']} X={i}")
                            for i in range(plot_bench.LADDER_MOST_RESULTS + 1)]
        result = run("plot_bench.py", self.write("many.json", bench), "-o", os.path.join(self.out, "plots"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"{plot_bench.LADDER_MOST_RESULTS + 1} results at M=4096 N=4096 K=4096: the ladder draws at "
                      f"most {plot_bench.LADDER_MOST_RESULTS}", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "plots")))
        self.assertRegex(plot_bench.__doc__, rf"more than {plot_bench.LADDER_MOST_RESULTS}\s+results is refused")

    def test_a_new_file_gets_the_umasks_permissions_and_a_replaced_one_keeps_its_own(self):
        ladder = os.path.join(self.out, "bench_ladder.png")
        result = subprocess.run([sys.executable, os.path.join(TOOLS, "plot_bench.py"), BENCH_4096, "-o", self.out],
                                capture_output=True, text=True, preexec_fn=lambda: os.umask(0o027))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(os.stat(ladder).st_mode & 0o777, 0o640)
        os.chmod(ladder, 0o604)
        self.assertEqual(run("plot_bench.py", BENCH_4096, "-o", self.out).returncode, 0)
        self.assertEqual(os.stat(ladder).st_mode & 0o777, 0o604)

    def test_an_output_name_that_is_not_a_regular_file_or_is_the_input_is_refused(self):
        # A FIFO: reading it for an SQLite header would wait for a writer that never comes.
        fifo = os.path.join(self.out, "bench_sweep.png")
        os.mkfifo(fifo)
        result = subprocess.run([sys.executable, os.path.join(TOOLS, "plot_bench.py"), BENCH_4096, "-o", self.out],
                                capture_output=True, text=True, timeout=60)
        self.assert_user_error(result, f"{fifo} is not a regular file")
        self.assertEqual(os.listdir(self.out), ["bench_sweep.png"])
        # The input where an output goes: it would be replaced by what is made from it.
        with tempfile.TemporaryDirectory() as out:
            table = os.path.join(out, "metrics.json")
            with open(TUNE_TABLE) as f, open(table, "w") as copy:
                copy.write(f.read())
            self.assert_user_error(run("plot_roofline.py", table, "-o", out), f"{table} is the input")
            with open(TUNE_TABLE) as f, open(table) as copy:
                self.assertEqual(copy.read(), f.read())
            self.assertEqual(os.listdir(out), ["metrics.json"])

    def test_a_folder_no_file_can_be_made_in_is_refused_before_any_work(self):
        # /proc takes no file, even from root, for whom os.access says that it would.
        self.assert_user_error(run("plot_bench.py", BENCH_4096, "-o", "/proc"), "-o /proc: cannot write into it")

    def test_a_standard_output_that_fails_exits_2_with_a_message(self):
        with open("/dev/full", "w") as full:
            result = subprocess.run([sys.executable, os.path.join(TOOLS, "plot_bench.py"), BENCH_4096, "-o", self.out],
                                    stdout=full, stderr=subprocess.PIPE, text=True)
        self.assert_environment_error(result, "plot_bench.py: cannot write standard output: No space left on device")
        self.assertNotIn("Exception ignored", result.stderr)
        self.assert_pngs(*plot_bench.OUTPUTS)  # the paths are said once every file is written

    def test_names_from_the_input_and_the_command_line_reach_the_terminal_escaped(self):
        out = os.path.join(self.out, "o\x1b[7mut")
        result = run("plot_bench.py", BENCH_4096, "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(os.path.join(self.out, "o\\x1b[7mut", "bench_ladder.png"), result.stdout)
        self.assertNotIn("\x1b", result.stdout)
        data = load(BENCH_4096)
        data["gpu"] = "Evil\x1b[31mRED\nGPU\u202e"
        data["results"][3]["config"] = "blocktile\x1b[2J"
        result = run("plot_bench.py", self.write("evil.json", data), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("no built-in ceilings for GPU 'Evil\\x1b[31mRED\\x0aGPU\\xe2\\x80\\xae'", result.stderr)
        self.assertNotIn("\x1b", result.stderr)
        self.assert_user_error(run("plot_roofline.py", self.write("evil.json", data), "-o", self.out),
                               "no built-in ceilings for GPU 'Evil\\x1b[31mRED\\x0aGPU\\xe2\\x80\\xae'")
        result = run("plot_bench.py", self.write("evil.json", data), "-o", self.out, "--peak-tflops", "60",
                     "--bandwidth", "4")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("no tile in 'blocktile\\x1b[2J'", result.stderr)
        self.assertNotIn("\x1b", result.stderr)

    def test_a_name_taken_by_a_folder_or_a_database_is_refused_before_any_file_is_written(self):
        sqlite_bytes = b"SQLite format 3\x00" + bytes(100)
        for script, source, names in (("plot_bench.py", BENCH_4096, plot_bench.OUTPUTS),
                                      ("plot_roofline.py", TUNE_TABLE, ("measured_vs_roofline.png", "metrics.json"))):
            for taken in names:
                with tempfile.TemporaryDirectory() as out:
                    os.mkdir(os.path.join(out, taken))
                    self.assert_user_error(run(script, source, "-o", out),
                                           f"{os.path.join(out, taken)} is a folder, where this writes a file")
                    self.assertEqual(os.listdir(out), [taken], f"{script} wrote a file before it refused")
                with tempfile.TemporaryDirectory() as out:
                    with open(os.path.join(out, taken), "wb") as f:
                        f.write(sqlite_bytes)
                    self.assert_user_error(run(script, source, "-o", out),
                                           f"{os.path.join(out, taken)} is an SQLite database, which this would replace")
                    self.assertEqual(os.listdir(out), [taken], f"{script} wrote a file before it refused")
                    with open(os.path.join(out, taken), "rb") as f:
                        self.assertEqual(f.read(), sqlite_bytes)
                with tempfile.TemporaryDirectory() as out:
                    with open(os.path.join(out, taken), "wb") as f:
                        f.write(bytes([0x37, 0x7f, 0x06, 0x82]) + bytes(28))  # a write-ahead log's header
                    self.assert_user_error(run(script, source, "-o", out), "is an SQLite database's log or journal")
                    self.assertEqual(os.listdir(out), [taken], f"{script} wrote a file before it refused")

    def test_a_png_cut_short_leaves_the_earlier_one_whole(self):
        # A file-size limit (SIGXFSZ ignored, so the write fails with EFBIG) stops the PNG
        # part way: the earlier PNG stays as it was, and no part of the new one is left.
        def limited():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))

        for script, source, png in (("plot_bench.py", BENCH_4096, "bench_ladder.png"),
                                    ("plot_roofline.py", TUNE_TABLE, "measured_vs_roofline.png")):
            result = run(script, source, "-o", self.out)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(self.out, png), "rb") as f:
                before = f.read()
            self.assertGreater(len(before), 20000, "the PNG is too small for the limit to cut it")
            result = subprocess.run([sys.executable, os.path.join(TOOLS, script), source, "-o", self.out],
                                    capture_output=True, text=True, preexec_fn=limited)
            self.assert_environment_error(result, f"cannot write {os.path.join(self.out, png)}")
            with open(os.path.join(self.out, png), "rb") as f:
                self.assertEqual(f.read(), before, f"{script} left a cut {png}")
            self.assertEqual([name for name in os.listdir(self.out) if name.endswith(".partial")], [])

    def test_without_matplotlib_the_scripts_say_so_and_exit_2(self):
        shadow = os.path.join(self.out, "shadow")
        os.makedirs(os.path.join(shadow, "matplotlib"))
        with open(os.path.join(shadow, "matplotlib", "__init__.py"), "w") as f:
            f.write("raise ImportError('no matplotlib here')\n")
        env = dict(os.environ, PYTHONPATH=shadow)
        for script in ("plot_bench.py", "plot_roofline.py"):
            never_made = os.path.join(self.out, "never", "made")
            self.assert_environment_error(run(script, BENCH_4096, "-o", never_made, env=env),
                                          "matplotlib is not installed")
            self.assertFalse(os.path.exists(os.path.dirname(never_made)), "the output folder was made")
            # --help and a bad input need no matplotlib: they answer as they do with it.
            helped = run(script, "--help", env=env)
            self.assertEqual(helped.returncode, 0, helped.stderr)
            self.assertIn("usage:", helped.stdout)
            self.assert_user_error(run(script, os.path.join(self.out, "missing.json"), "-o", self.out, env=env),
                                   "missing.json")
        # matplotlib there, but its pyplot failing to import (a numpy it needs is missing): the
        # same answer.
        with open(os.path.join(shadow, "matplotlib", "__init__.py"), "w") as f:
            f.write("def use(backend):\n    pass\n")
        with open(os.path.join(shadow, "matplotlib", "pyplot.py"), "w") as f:
            f.write("raise ImportError('numpy missing')\n")
        self.assert_environment_error(run("plot_bench.py", BENCH_4096, "-o", self.out, env=env),
                                      "matplotlib is not installed, or not whole (numpy missing)")

    def test_an_output_folder_that_cannot_be_one_is_named(self):
        afile = os.path.join(self.out, "afile")
        open(afile, "w").close()
        self.assert_user_error(run("plot_bench.py", BENCH_4096, "-o", afile), f"-o {afile} is not a folder")
        self.assert_user_error(run("plot_bench.py", BENCH_4096, "-o", os.path.join(afile, "sub")), "Not a directory")
        self.assert_user_error(run("plot_roofline.py", BENCH_4096, "-o", ""), "the output folder is empty")
        self.assert_user_error(run("plot_bench.py", BENCH_4096, "-o", self.out, "--peak-tflops", "inf"), "--peak-tflops")

    def test_a_sweep_over_m_is_drawn_against_m(self):
        # A batch sweep at one N and K: every point at one N tick, before.
        entries = load(BENCH_SWEEP)
        for m, e in zip((1, 8, 32, 64, 128), entries):
            e.update(m=m, n=4096, k=4096)
        self.assertEqual(plot_bench.sweep_axis(entries), "m")
        for points in plot_bench.sweep_lines(entries).values():
            self.assertEqual([size for size, _, _ in points], sorted(e["m"] for e in entries))
        self.assertEqual(plot_bench.sweep_axis(load(BENCH_SWEEP)), "n")
        self.assertEqual(plot_bench.sweep_axis(entries[:1]), "n", "one size")
        result = run("plot_bench.py", self.write("batches.json", entries), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs(*plot_bench.OUTPUTS)

    def test_two_configurations_of_one_family_are_two_kernels(self):
        # sgemm-bench names a row by its family: --config beside the defaults gives two rows
        # named alike, which the plots drew as one bar slot and one zig-zag line.
        entries = load(BENCH_SWEEP)
        for e in entries:
            fast = next(r for r in e["results"] if r["kernel"] == "async")
            e["results"].append(dict(fast, config="async BM=64 BN=64 BK=8 TM=4 TN=4", tflops=fast["tflops"] / 2,
                                     median_ms=fast["median_ms"] * 2, valid=e is not entries[0]))
        lines = plot_bench.sweep_lines(entries)
        fast_config = next(r["config"] for r in entries[0]["results"] if r["kernel"] == "async")
        self.assertIn(fast_config, lines)
        self.assertIn("async BM=64 BN=64 BK=8 TM=4 TN=4", lines)
        self.assertNotIn("async", lines, "two configurations kept the family's name")
        self.assertIn("naive", lines, "a family with one configuration is named by the family")
        by_n = sorted(entries, key=lambda e: e["n"])
        slow = lines["async BM=64 BN=64 BK=8 TM=4 TN=4"]
        self.assertEqual([n for n, _, _ in slow], [e["n"] for e in by_n])
        self.assertEqual([valid for _, _, valid in slow], [e is not entries[0] for e in by_n])
        for n, tflops, _ in lines[fast_config]:
            entry = next(e for e in entries if e["n"] == n)
            self.assertEqual(tflops, next(r["tflops"] for r in entry["results"] if r["config"] == fast_config))
        path = self.write("two_async.json", entries)
        result = run("plot_bench.py", path, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs(*plot_bench.OUTPUTS)

    def test_a_cublas_time_beside_a_kernel_is_checked(self):
        # It gave a traceback as text, and a negative speedup as a negative number.
        for value, words in (("0.1", 'not "0.1"'), (-1.0, "not -1.0"), (True, "not true")):
            data = load(BENCH_4096)
            data["results"][1]["cublas_ms"] = value
            path = self.write("cublas_ms.json", data)
            for script in ("plot_bench.py", "plot_roofline.py"):
                self.assert_user_error(run(script, path, "-o", self.out),
                                       f'results[1]: "cublas_ms" must be a positive number below 1e12 or null, {words}')

    def test_a_result_without_its_check_is_refused(self):
        # Without "valid" the plots cannot tell a wrong result from a right one: plot_bench.py
        # drew it as right and plot_roofline.py dropped it.
        data = load(BENCH_4096)
        del data["results"][1]["valid"]
        path = self.write("unchecked.json", data)
        for script in ("plot_bench.py", "plot_roofline.py"):
            self.assert_user_error(run(script, path, "-o", self.out), 'results[1]: "valid" must be a boolean, not null')

    def test_the_layout_is_carried(self):
        data = load(BENCH_4096)
        data["trans"] = "NT"
        result = run("plot_roofline.py", self.write("nt.json", data), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(load(os.path.join(self.out, "metrics.json"))["m12_gemms"][0]["transposes"], "NT")
        self.assertEqual(plot_bench.title(data), "NVIDIA H200, M=4096 N=4096 K=4096 NT")
        data["trans"] = "NX"
        self.assert_user_error(run("plot_bench.py", self.write("nx.json", data), "-o", self.out),
                               '"trans" must be NN, NT, TN or TT or null, not "NX"')

    def test_effective_intensity_by_hand(self):
        big = {"m": 4096, "n": 4096, "k": 4096}
        cases = [
            ("naive", "naive BLOCK_X=32 BLOCK_Y=8", 0.25),        # 2 FLOPs per 8 bytes
            ("smem", "smem TILE=32", 8.0),                         # 32*32 / (2*64)
            ("blocktile", "blocktile BM=128 BN=128 BK=8 TM=8 TN=8", 32.0),  # 16384 / 512
            ("async", "async BM=128 BN=256 BK=8 TM=8 TN=16", 128 * 256 / 768),
            # decode's rows are MT
            ("decode", "decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=4 RING=0 SUM_PASS=0", 8 * 128 / 272),
            ("cublas", "default math (fp32 FFMA)", 4096 / 6),     # 2*4096^3 / (4*3*4096^2)
        ]
        for kernel, config, want in cases:
            got = plot_bench.effective_intensity({"kernel": kernel, "config": config}, big)
            self.assertAlmostEqual(got, want, places=6, msg=kernel)
        # A 64^3 problem moves at least 4*3*64^2 bytes for 2*64^3 FLOPs: 64/6 caps the tile's 32.
        small = {"m": 64, "n": 64, "k": 64}
        self.assertAlmostEqual(plot_bench.effective_intensity(
            {"kernel": "vec4", "config": "vec4 BM=128 BN=128"}, small), 64 / 6, places=6)
        self.assertIsNone(plot_bench.effective_intensity({"kernel": "mystery", "config": "X=1"}, big))
        self.assertIsNone(plot_bench.effective_intensity({"kernel": "smem", "config": None}, big))
        self.assertIsNone(plot_bench.effective_intensity({"kernel": "vec4", "config": "vec4 BM=0 BN=64"}, big))


class PlotRoofline(PlotTest):
    def metrics(self, source):
        result = run("plot_roofline.py", source, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_pngs("measured_vs_roofline.png")
        return load(os.path.join(self.out, "metrics.json"))

    def test_the_tuners_table(self):
        table = load(TUNE_TABLE)
        metrics = self.metrics(TUNE_TABLE)
        peak, bandwidth = metrics["peak_tflops"], metrics["bandwidth_tbs"]
        rows = metrics["m12_gemms"]
        self.assertEqual(len(rows), len(table["shapes"]))
        for shape, row in zip(table["shapes"], rows):
            m, n, k = shape["m"], shape["n"], shape["k"]
            self.assertEqual((row["m"], row["n"], row["k"]), (m, n, k))
            self.assertEqual(row["weight"], shape.get("weight", 1))
            floor_s = max(2 * m * n * k / (peak * 1e12), 4 * (m * k + k * n + m * n) / (bandwidth * 1e12))
            self.assertAlmostEqual(row["floor_ms"], floor_s * 1e3, delta=1e-9 * floor_s * 1e3)
            gflops = lambda ms: 2 * m * n * k / (ms * 1e-3) / 1e9  # noqa: E731
            self.assertAlmostEqual(row["cublas_gflops"], gflops(shape["cublas_ms"]), delta=1e-6)
            if shape["winner"] is None:
                self.assertIsNone(row["winner_gflops"])
                self.assertIsNone(row["speedup_vs_cublas"])
            else:
                self.assertEqual(row["winner_kernel"], shape["winner"]["kernel"])
                self.assertAlmostEqual(row["winner_gflops"], gflops(shape["winner"]["median_ms"]), delta=1e-6)
                self.assertAlmostEqual(row["speedup_vs_cublas"], shape["cublas_ms"] / shape["winner"]["median_ms"])
        self.assertEqual(rows[-1]["name"], "32x128256x4096")  # a shape without a name gets its dimensions

    def test_sgemm_bench_json(self):
        entries = load(BENCH_SWEEP)
        rows = self.metrics(BENCH_SWEEP)["m12_gemms"]
        self.assertEqual(len(rows), len(entries))
        for entry, row in zip(entries, rows):
            valid = [r for r in entry["results"] if r["kernel"] != "cublas" and r["valid"]]
            best = min(valid, key=lambda r: r["median_ms"])
            cublas = next(r for r in entry["results"] if r["kernel"] == "cublas")
            self.assertEqual(row["winner_kernel"], best["kernel"])
            self.assertEqual(row["winner_ms"], best["median_ms"])
            self.assertEqual(row["cublas_ms"], cublas["median_ms"])
            # sgemm-bench's own TFLOPS for the same run
            self.assertAlmostEqual(row["winner_gflops"], best["tflops"] * 1e3, delta=1e-3 * best["tflops"])

    def test_the_winner_is_held_to_cublas_timed_beside_it(self):
        # sgemm-bench now times cuBLAS in alternation with each kernel (the row's cublas_ms);
        # that time, not cuBLAS's own row's, is the winner's bar. The fixture, older, has none.
        entries = load(BENCH_SWEEP)
        entry = entries[0]
        best = min((r for r in entry["results"] if r["kernel"] != "cublas" and r["valid"]), key=lambda r: r["median_ms"])
        best["cublas_ms"] = 3 * best["median_ms"]
        path = os.path.join(self.out, "with_cublas_beside.json")
        with open(path, "w") as f:
            json.dump(entries, f)
        row = self.metrics(path)["m12_gemms"][0]
        self.assertEqual(row["cublas_ms"], best["cublas_ms"])
        self.assertAlmostEqual(row["speedup_vs_cublas"], 3.0)

    def test_an_invalid_result_is_never_the_winner(self):
        # A wrong result, however fast, is not a kernel to show.
        entries = load(BENCH_SWEEP)
        entry = entries[0]
        best = min((r for r in entry["results"] if r["kernel"] != "cublas" and r["valid"]), key=lambda r: r["median_ms"])
        wrong = dict(best, kernel="wrong_but_fast", median_ms=best["median_ms"] / 10, valid=False)
        entry["results"].append(wrong)
        path = os.path.join(self.out, "with_invalid.json")
        with open(path, "w") as f:
            json.dump(entries, f)
        row = self.metrics(path)["m12_gemms"][0]
        self.assertEqual(row["winner_kernel"], best["kernel"])
        self.assertEqual(row["winner_ms"], best["median_ms"])

    def test_bad_tuner_table(self):
        path = os.path.join(self.out, "bad.json")
        cases = [
            ({"m": 8, "n": 0, "k": 4096}, 'shapes[0]: "n" must be a positive integer below 2^31, not 0'),
            ({"m": 8, "n": 8, "k": 8, "winner": "async"}, "shapes[0].winner must be an object"),
            ({"m": 8, "n": 8, "k": 8, "winner": {"kernel": "async", "median_ms": "0.03"}},
             'shapes[0].winner: "median_ms" must be a positive number below 1e12, not "0.03"'),
            ({"m": 8, "n": 8, "k": 8, "cublas_ms": -1}, '"cublas_ms" must be a positive number below 1e12 or null, not -1'),
            ({"m": 8, "n": 8, "k": 8, "name": 5}, '"name" must be text or null, not 5'),
            ({"m": 8, "n": 8, "k": 8, "transposes": "XY"}, '"transposes" must be NN, NT, TN or TT or null, not "XY"'),
            ({"m": 8, "n": 8, "k": 8, "winner": {"kernel": "async", "median_ms": 1e-320}},
             "its winner_gflops (8x8x8, winner 1e-320 ms, cuBLAS None ms) comes to a number past what a float holds"),
            ({"m": 8, "n": 8, "k": 8, "cublas_ms": 1e-320}, "its cublas_gflops"),
            # An integer past what a float holds, quoted cut short.
            ({"m": 8, "n": 8, "k": 8, "weight": 10**400},
             '"weight" must be a positive number or null, not 1' + "0" * 56 + "..."),
        ]
        for shape, words in cases:
            with open(path, "w") as f:
                json.dump({"gpu": "NVIDIA H200", "shapes": [shape]}, f)
            self.assert_user_error(run("plot_roofline.py", path, "-o", self.out), words)
        # A rate a float holds, but a % of the floor it does not (the floor of a slow memory).
        with open(path, "w") as f:
            json.dump({"gpu": "NVIDIA H200", "shapes": [{"m": 8, "n": 8, "k": 8,
                                                          "winner": {"kernel": "async", "median_ms": 1e-309}}]}, f)
        self.assert_user_error(run("plot_roofline.py", path, "-o", self.out, "--bandwidth", "0.0001"),
                               "its winner_pct_of_floor")
        self.assertEqual(os.listdir(self.out), ["bad.json"], "a file was written before the refusal")
        # A weight past the drawn numbers' bound is no error: it is copied, never drawn.
        with open(path, "w") as f:
            json.dump({"gpu": "NVIDIA H200", "shapes": [{"m": 8, "n": 8, "k": 8, "weight": 2e12}]}, f)
        result = run("plot_roofline.py", path, "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(load(os.path.join(self.out, "metrics.json"))["m12_gemms"][0]["weight"], 2e12)

    def test_a_run_that_did_not_finish_says_so_and_metrics_carry_it(self):
        # A stopped, budget-cut or faulted tune's table was plotted as a whole one, and its
        # metrics.json did not say.
        table = dict(load(TUNE_TABLE), interrupted=True, untried_shapes=2, fault="async BM=128: illegal address")
        result = run("plot_roofline.py", self.write("partial.json", table), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        for words in ("note: the tune was stopped by a signal", "note: 2 shape(s) got no winner",
                      "note: the tune ended on a GPU fault (async BM=128: illegal address)"):
            self.assertIn(words, result.stderr)
        metrics = load(os.path.join(self.out, "metrics.json"))
        self.assertEqual((metrics["interrupted"], metrics["untried_shapes"], metrics["fault"]),
                         (True, 2, "async BM=128: illegal address"))
        # A whole run: nothing said, and the fields as the table has them.
        table.update(interrupted=False, untried_shapes=0, fault="")
        result = run("plot_roofline.py", self.write("whole.json", table), "-o", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("note:", result.stderr)
        self.assertEqual(load(os.path.join(self.out, "metrics.json"))["untried_shapes"], 0)
        table["untried_shapes"] = -1
        self.assert_user_error(run("plot_roofline.py", self.write("bad.json", table), "-o", self.out),
                               '"untried_shapes" must be a whole number, 0 or more or null, not -1')

    def test_a_tune_that_finished_no_shape_says_why(self):
        # sgemm-tune writes such a table when it is stopped before its first shape: it was
        # "needs a non-empty shapes list", as if the file were damaged.
        table = dict(load(TUNE_TABLE), shapes=[], interrupted=True, untried_shapes=0)
        self.assert_user_error(run("plot_roofline.py", self.write("none.json", table), "-o", self.out),
                               "the tune finished no shape, so there is nothing to plot (the tune was stopped by a signal")
        table.update(interrupted=False, untried_shapes=3)
        self.assert_user_error(run("plot_roofline.py", self.write("none.json", table), "-o", self.out),
                               "nothing to plot (3 shape(s) got no winner")

    def test_the_alignment_tells_two_rows_of_one_shape_apart(self):
        table = {"gpu": "NVIDIA H200", "shapes": [{"name": "x", "m": 64, "n": 64, "k": 63, "alignment": a,
                                                    "winner": None, "cublas_ms": 0.01} for a in (4, 16)]}
        rows = self.metrics(self.write("aligned.json", table))["m12_gemms"]
        self.assertEqual([r["alignment"] for r in rows], [4, 16])
        # Labelled with it only where two rows of one shape need telling apart: sgemm-tune
        # writes every row's class, a tightly packed K = 63 row's being 4.
        self.assertEqual(plot_roofline.shape_labels(rows), ["x\n64x64x63 align4", "x\n64x64x63 align16"])
        self.assertEqual(plot_roofline.shape_labels(rows[:1]), ["x\n64x64x63"])
        table["shapes"][0]["alignment"] = 2
        self.assert_user_error(run("plot_roofline.py", self.write("aligned.json", table), "-o", self.out),
                               '"alignment" must be 4, 8 or 16 or null, not 2')

    def test_a_weight_the_tuner_takes_is_taken(self):
        # sgemm-tune's shapes CSV takes any positive weight, and its --json writes it as given.
        table = {"gpu": "NVIDIA H200", "shapes": [{"m": 8, "n": 64, "k": 64, "weight": w, "winner": None,
                                                    "cublas_ms": 0.01} for w in (0.5, 3000000000)]}
        path = os.path.join(self.out, "weights.json")
        with open(path, "w") as f:
            json.dump(table, f)
        self.assertEqual([r["weight"] for r in self.metrics(path)["m12_gemms"]], [0.5, 3000000000])

    def test_ceilings_past_what_a_gpu_has_are_refused_and_nothing_is_written(self):
        out = os.path.join(self.out, "never")
        for option, value, words in (("--bandwidth", "1e-300", "it must be between 0.0001 and 100 TB/s"),
                                     ("--bandwidth", "4800", "it must be between 0.0001 and 100 TB/s"),
                                     ("--peak-tflops", "1e-300", "it must be between 0.001 and 10000 TFLOPS"),
                                     ("--peak-tflops", "66900", "it must be between 0.001 and 10000 TFLOPS"),
                                     ("--peak-tflops", "10001", "a ceiling of 10001.0 TFLOPS")):
            self.assert_user_error(run("plot_roofline.py", TUNE_TABLE, "-o", out, option, value), words)
        table = dict(load(TUNE_TABLE), peak_tflops=1e-300, bandwidth_tbs=4.29)
        path = os.path.join(self.out, "tiny_peak.json")
        with open(path, "w") as f:
            json.dump(table, f)
        self.assert_user_error(run("plot_roofline.py", path, "-o", out), "a ceiling of 1e-300 TFLOPS")
        self.assertFalse(os.path.exists(out))

    def test_a_speedup_past_what_a_float_holds_is_refused(self):
        table = {"gpu": "NVIDIA H200", "shapes": [{"m": 8, "n": 8, "k": 8, "cublas_ms": 1e11,
                                                    "winner": {"kernel": "async", "median_ms": 1e-300}}]}
        path = os.path.join(self.out, "speedup.json")
        with open(path, "w") as f:
            json.dump(table, f)
        self.assert_user_error(run("plot_roofline.py", path, "-o", self.out), "its speedup_vs_cublas")
        self.assertEqual([name for name in os.listdir(self.out) if name.startswith("metrics.json")], [])

    def test_the_tables_own_ceilings_and_transposes(self):
        # sgemm-tune names the ceilings of its "% floor"; they win over the GPU's name, and a
        # shape tuned both NN and TN stays two rows that say which is which.
        table = {"gpu": "NVIDIA H100 PCIe", "peak_tflops": 51.0, "bandwidth_tbs": 2.0,
                 "shapes": [{"m": 64, "n": 64, "k": 64, "transposes": t, "winner": None, "cublas_ms": 0.01}
                            for t in ("NN", "TN")]}
        path = os.path.join(self.out, "table.json")
        with open(path, "w") as f:
            json.dump(table, f)
        metrics = self.metrics(path)
        self.assertEqual((metrics["peak_tflops"], metrics["bandwidth_tbs"]), (51.0, 2.0))
        self.assertEqual([r["transposes"] for r in metrics["m12_gemms"]], ["NN", "TN"])
        # One ceiling alone, with the other of the GPU the table names; for a GPU without
        # built-in ceilings, one alone is not enough.
        for key, value, want in (("peak_tflops", 60.0, (60.0, 4.29)), ("bandwidth_tbs", 4.8, (66.9, 4.8))):
            with open(path, "w") as f:
                json.dump(dict(table, gpu="NVIDIA H200", **{"peak_tflops": None, "bandwidth_tbs": None, key: value}), f)
            metrics = self.metrics(path)
            self.assertEqual((metrics["peak_tflops"], metrics["bandwidth_tbs"]), want)
        with open(path, "w") as f:
            json.dump(dict(table, bandwidth_tbs=None), f)
        self.assert_user_error(run("plot_roofline.py", path, "-o", self.out),
                               "no built-in ceilings for GPU 'NVIDIA H100 PCIe'")

    def test_a_metrics_file_that_cannot_be_written_exits_2_and_leaves_the_old_one(self):
        # A file-size limit below metrics.json's size (SIGXFSZ ignored: the write fails with EFBIG).
        def limited():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

        metrics = os.path.join(self.out, "metrics.json")
        with open(metrics, "w") as f:
            f.write("the old one\n")
        result = subprocess.run([sys.executable, os.path.join(TOOLS, "plot_roofline.py"), TUNE_TABLE, "-o", self.out],
                                capture_output=True, text=True, preexec_fn=limited)
        self.assert_environment_error(result, f"cannot write {metrics}")
        with open(metrics) as f:
            self.assertEqual(f.read(), "the old one\n")
        self.assertEqual(os.listdir(self.out), ["metrics.json"])


class Ceilings(unittest.TestCase):
    def test_the_table_agrees_with_sgemm_roofline(self):
        for name, (_, peak, bandwidth) in plotting.FP32_CEILINGS.items():
            out = subprocess.run([SGEMM_ROOFLINE, "gpt2", "--gpu", name, "--json"], capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            gpu = json.loads(out.stdout)["gpu"]
            self.assertEqual((gpu["fp32_tflops"], gpu["bandwidth_tbs"]), (peak, bandwidth), name)

    def test_the_ranges_agree_with_sgemm_roofline(self):
        # Each end is taken, and a step past it refused, by sgemm-roofline and by the scripts.
        (peak_low, peak_high), (bandwidth_low, bandwidth_high) = plotting.PEAK_TFLOPS_RANGE, plotting.BANDWIDTH_TBS_RANGE
        with tempfile.TemporaryDirectory() as tmp:
            for peak, bandwidth, taken in ((peak_low, bandwidth_low, True), (peak_high, bandwidth_high, True),
                                           (peak_low * 0.99, bandwidth_low, False), (peak_high * 1.01, 1, False),
                                           (1, bandwidth_low * 0.99, False), (1, bandwidth_high * 1.01, False)):
                gpu = os.path.join(tmp, "gpu.json")
                with open(gpu, "w") as f:
                    json.dump({"name": "x", "fp32_tflops": peak, "bandwidth_tbs": bandwidth}, f)
                out = subprocess.run([SGEMM_ROOFLINE, "gpt2", "--gpu", gpu], capture_output=True, text=True)
                self.assertEqual(out.returncode, 0 if taken else 1, (peak, bandwidth, out.stderr))
                if taken:
                    plotting.checked_ceilings(plotting.Ceilings("x", peak, bandwidth))
                else:
                    with self.assertRaises(plotting.UserError, msg=(peak, bandwidth)):
                        plotting.checked_ceilings(plotting.Ceilings("x", peak, bandwidth))

    def test_cuda_device_names_find_their_gpu(self):
        self.assertEqual(plotting.ceilings_for("NVIDIA H200").name, "H200")
        self.assertEqual(plotting.ceilings_for("NVIDIA H100 80GB HBM3").name, "H100 SXM")
        self.assertEqual(plotting.ceilings_for("Tesla T4").name, "T4")
        self.assertEqual(plotting.ceilings_for("NVIDIA H200", bandwidth_tbs=4.8).bandwidth_tbs, 4.8)
        # Other boards of the same chip have other ceilings: they are not taken for the table's.
        for name in ("NVIDIA H100 PCIe", "NVIDIA A100-PCIE-40GB", "NVIDIA T400 4GB"):
            with self.assertRaises(plotting.UserError, msg=name):
                plotting.ceilings_for(name)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
