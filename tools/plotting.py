"""What the plot scripts share: the GPUs' fp32 ceilings, reading sgemm-bench JSON, a GEMM's
roofline figures, and drawing a roofline. matplotlib draws headless (the Agg backend), so the
scripts run on machines without a display.
"""
import json
import math
import os
import re
import stat
import tempfile
import time
import warnings
from typing import NamedTuple

from script_io import OutputFailure, UserError, note, parser_for, printable

def pyplot():
    """matplotlib's pyplot, imported when a figure is drawn, so that --help and the checks of
    the input work without it. Headless: the Agg backend is chosen first."""
    # MPLBACKEND names the backend matplotlib checks at its import: one it does not know
    # ("inline", from a notebook's setup) failed with a traceback before Agg was chosen.
    os.environ.pop("MPLBACKEND", None)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot
    except ImportError as e:  # the machine's setup, not the input: exit 2, as the C++ tools do
        raise OutputFailure(f"matplotlib is not installed, or not whole ({e}): install python3-matplotlib "
                            "(tools/install-deps.sh does)")
    return matplotlib.pyplot


# fp32 FFMA peak (TFLOPS) and DRAM bandwidth (TB/s) of tuner/decode/gpu_spec.cpp's built-in GPUs
# (tests/decode/test_plots.py checks that the two agree), each with the CUDA device names that
# are that very board ("NVIDIA " left off). Names are matched whole: an H100 PCIe or an A100
# 40GB has other ceilings and needs --peak-tflops and --bandwidth. The H200's figures were
# measured on this project's H200.
FP32_CEILINGS = {
    "T4": (("T4", "Tesla T4"), 8.1, 0.320),
    "A100-80GB": (("A100-80GB", "A100-SXM4-80GB"), 19.5, 2.039),
    "RTX 3090": (("RTX 3090", "GeForce RTX 3090"), 35.6, 0.936),
    "H100 SXM": (("H100 SXM", "H100 80GB HBM3", "H100 SXM5 80GB"), 67.0, 3.35),
    "H200": (("H200",), 66.9, 4.29),
}


class Ceilings(NamedTuple):
    name: str
    peak_tflops: float
    bandwidth_tbs: float

    @property
    def ridge(self):
        """The intensity (FLOP/B) where memory stops being the limit."""
        return self.peak_tflops / self.bandwidth_tbs

    def attainable_tflops(self, intensity):
        return min(self.peak_tflops, intensity * self.bandwidth_tbs)


def _squeeze(name):
    """A GPU name without "NVIDIA ", case and punctuation, for matching."""
    name = name[len("NVIDIA "):] if name.startswith("NVIDIA ") else name
    return "".join(c for c in name.lower() if c.isalnum())


def ceilings_for(gpu_name, peak_tflops=None, bandwidth_tbs=None, needed=True):
    """The fp32 ceilings of the GPU named by a CUDA device name, each replaced by the override
    when one is given. A GPU not in the table needs both overrides; without either, and not
    `needed`, None (the plots that need no ceilings are drawn all the same)."""
    for key, (names, peak, bandwidth) in FP32_CEILINGS.items():
        if _squeeze(gpu_name) in (_squeeze(name) for name in names):
            return checked_ceilings(Ceilings(key, peak_tflops or peak, bandwidth_tbs or bandwidth))
    if not needed and peak_tflops is None and bandwidth_tbs is None:
        return None
    if peak_tflops is None or bandwidth_tbs is None:
        known = ", ".join(FP32_CEILINGS)
        raise UserError(f"no built-in ceilings for GPU '{gpu_name}' (known: {known}): "
                        "give --peak-tflops and --bandwidth")
    return checked_ceilings(Ceilings(gpu_name, peak_tflops, bandwidth_tbs))


# The ceilings a GPU can have, as sgemm-roofline takes them for fp32 (tuner/decode/gpu_spec.cpp):
# past them a floor or a ridge overflows or vanishes (a bandwidth of 1e-300 TB/s made every floor
# infinite, which metrics.json cannot hold), or is a figure given in GFLOPS or GB/s.
PEAK_TFLOPS_RANGE = (1e-3, 1e4)
BANDWIDTH_TBS_RANGE = (1e-4, 1e2)


def checked_ceilings(ceilings):
    """`ceilings`, if each is within what a GPU can have (the ranges above)."""
    for value, (low, high), unit in ((ceilings.peak_tflops, PEAK_TFLOPS_RANGE, "TFLOPS"),
                                     (ceilings.bandwidth_tbs, BANDWIDTH_TBS_RANGE, "TB/s")):
        if not low <= value <= high:
            raise UserError(f"a ceiling of {value!r} {unit}: it must be between {low:g} and {high:g} {unit}, "
                            "as sgemm-roofline takes it")
    return ceilings


# The end of both scripts' --help: how they write, and their exit statuses.
WRITING_AND_EXIT_STATUS = """
Each file is written at a new name of its own beside its name and renamed into place: a write
that fails leaves an earlier file whole, and no file already in DIR is taken for the new one.
A new file gets the permissions the umask leaves, a replaced one keeps its own (a symbolic link
at a file's name is replaced, its target left as it was). A run stopped by Ctrl-C or SIGTERM
removes the file it was writing. Names from the input and the command line reach the terminal
(and the figures) with their control characters escaped as \\xNN; a figure draws at most 160
characters of each name, a longer one cut in its middle ("..."). What matplotlib warns of
(labels too many to fit, a value past what an axis can show) is a "note:" line on standard
error, naming the file where the warning comes as the file is drawn (past five for one file, a
count), and the files are written all the same.

Exit status: 0 the files are written; 1 bad arguments or input, or an output folder that cannot
be made or written into, or a file name there taken by a folder, by what is not a regular file
(a FIFO), by the input itself, or by an SQLite database or its log or journal (no file is
written); 2 matplotlib is not installed (or its pyplot does not import), a file failed as it
was written (an earlier file of that name is left whole, and no half-written one is left beside
it), or standard output failed (a full disk, a reader gone after `| head`; it is written
after the files, which are then all in place).
"""


def argument_parser(doc, results_help, out_help):
    """The scripts' common command line: the input JSON, -o DIR and the ceiling overrides; the
    script's docstring and WRITING_AND_EXIT_STATUS are its --help."""
    parser = parser_for(doc + WRITING_AND_EXIT_STATUS)
    parser.add_argument("results", help=results_help)
    parser.add_argument("-o", "--out-dir", required=True, help=out_help)
    parser.add_argument("--peak-tflops", type=positive_float,
                        help="fp32 peak in TFLOPS (default: a tune table's own, else the built-in figure of "
                             "the GPU the input names)")
    parser.add_argument("--bandwidth", type=positive_float,
                        help="memory bandwidth in TB/s (default: a tune table's own, else the built-in figure of "
                             "the GPU the input names)")
    return parser


def positive_float(text):
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(text)
    return value


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise UserError(f"{path}: {e.strerror}")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text, so not JSON")
    except ValueError as e:  # JSONDecodeError, and an integer of more digits than Python converts
        raise UserError(f"{path}: not valid JSON: {e}")
    except RecursionError:
        raise UserError(f"{path}: nested too deeply to be the tools' JSON")


LARGEST_SIZE = 2**31 - 1  # M, N and K are ints in every tool that writes this JSON


def is_positive_integer(value):
    """A size or a count: an int from 1 to 2^31 - 1 (booleans are not)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= LARGEST_SIZE


# Past any time in ms, rate, percentage or count a run gives, and far below the values (near the
# largest float) whose axis padding overflows matplotlib to infinity: a traceback, not a plot.
LARGEST_NUMBER = 1e12


def is_positive_number(value, below=LARGEST_NUMBER):
    """A time or a rate: a number above 0 and below `below` (NaN, infinities, 0, booleans and
    integers past what a float holds are not)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return 0 < float(value) < below
    except OverflowError:
        return False


def shown(value):
    """A JSON value as a message quotes it: cut at 60 characters, so a huge one stays one line."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_fields(record, where, path, required, optional=()):
    """Each (key, test, what) of `required` must be in the dict `record` and pass its test; each
    of `optional` may be absent or null. A failure is a UserError naming the file and `where`."""
    if not isinstance(record, dict):
        raise UserError(f"{path}: {where} must be an object")
    for key, test, what in required:
        if not test(record.get(key)):
            raise UserError(f"{path}: {where}: \"{key}\" must be {what}, not {shown(record.get(key))}")
    for key, test, what in optional:
        if record.get(key) is not None and not test(record[key]):
            raise UserError(f"{path}: {where}: \"{key}\" must be {what} or null, not {shown(record[key])}")


POSITIVE_INTEGER = (is_positive_integer, "a positive integer below 2^31")
SIZE_FIELDS = tuple((key, *POSITIVE_INTEGER) for key in ("m", "n", "k"))
GPU_FIELD = ("gpu", lambda v: isinstance(v, str) and v != "", "a GPU's name")
TEXT = (lambda v: isinstance(v, str), "text")
POSITIVE_NUMBER = (is_positive_number, "a positive number below 1e12")
TRANSPOSES = (lambda v: v in ("NN", "NT", "TN", "TT"), "NN, NT, TN or TT")
ALIGNMENT = (lambda v: v in (4, 8, 16) and not isinstance(v, bool), "4, 8 or 16")


def bench_entries(data, path):
    """sgemm-bench JSON as a list of entries, one per size: a sweep is an array of them. Every
    field the plots read is checked here, so bad input is one message, not a traceback."""
    entries = data if isinstance(data, list) else [data]
    if not entries:
        raise UserError(f"{path}: no entries")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not all(key in entry for key in ("gpu", "m", "n", "k", "results")):
            raise UserError(f"{path}: not sgemm-bench JSON (each entry needs gpu, m, n, k and results; "
                            "plot_roofline.py also takes the tuner's --json table)")
        where = f"entry {i}"
        check_fields(entry, where, path, [GPU_FIELD, *SIZE_FIELDS,
                                          ("results", lambda v: isinstance(v, list) and v, "a non-empty list")],
                     [("trans", *TRANSPOSES)])
        for j, result in enumerate(entry["results"]):
            check_fields(result, f"{where}, results[{j}]", path,
                         [("kernel", *TEXT), ("median_ms", *POSITIVE_NUMBER), ("tflops", *POSITIVE_NUMBER),
                          ("valid", lambda v: isinstance(v, bool), "a boolean")],
                         [("config", *TEXT), ("pct_cublas", *POSITIVE_NUMBER), ("cublas_ms", *POSITIVE_NUMBER)])
    # The plots draw one GPU's ceilings and name one GPU: entries of two would be drawn
    # under the first one's name.
    gpus = sorted({printable(e["gpu"]) for e in entries})
    if len(gpus) > 1:
        raise UserError(f"{path}: entries of more than one GPU ({', '.join(gpus)}): plot each GPU's apart")
    return entries


# The most characters of one name a figure draws. matplotlib fails outright on a line some 2000
# characters long ("raster overflow", a traceback after the first PNG was written), and a line
# past a figure's width is unreadable anyway.
FIGURE_TEXT_LIMIT = 160
FIGURE_TEXT_CUT = "..."
# The share of the kept characters taken from the end: less than half, as a name's start says
# most of what it is, but enough for a title's shape (M=2147483647 N=... K=... TT, 41 characters).
FIGURE_TEXT_TAIL_SHARE = 3 / 8


def figure_text(text, width=None):
    """`text` as a figure shows it: printable (a control character would be a missing glyph,
    with matplotlib's warning), cut to FIGURE_TEXT_LIMIT characters, and each $ escaped, which
    matplotlib would read as the start of a formula (a name with one made it fail). A longer
    text loses its middle, not its end: a title's end is the GEMM's shape, and a label's may
    be what tells two configurations apart. The cut keeps a character's \\xNN escape whole.
    With a `width`, the text is wrapped into lines of about that many characters, here and not
    after, where a break could fall inside an escape and show its backslash alone."""
    pieces = [printable(c) for c in str(text)]
    if sum(map(len, pieces)) > FIGURE_TEXT_LIMIT:
        tail_room = int((FIGURE_TEXT_LIMIT - len(FIGURE_TEXT_CUT)) * FIGURE_TEXT_TAIL_SHARE)
        head_room = FIGURE_TEXT_LIMIT - len(FIGURE_TEXT_CUT) - tail_room
        pieces = _leading(pieces, head_room) + [FIGURE_TEXT_CUT] + _leading(pieces[::-1], tail_room)[::-1]
    pieces = [r"\$" if piece == "$" else piece for piece in pieces]
    return "".join(pieces) if width is None else "\n".join("".join(line) for line in _wrapped(pieces, width))


def _leading(pieces, room):
    """The pieces from the first on that fit, together, in `room` characters."""
    kept = []
    for piece in pieces:
        room -= len(piece)
        if room < 0:
            break
        kept.append(piece)
    return kept


def _wrapped(pieces, width):
    """The pieces as lines of `width` characters, broken as textwrap.fill breaks a text: at
    spaces, and a word longer than a line from the room left on the current line on. But a
    word breaks only between two pieces, so that no escape is split (an escape longer than
    `width` gets a line to itself); a run of spaces is one, and a hyphen is no break."""
    lines = [[]]
    for word in _split_at_spaces(pieces):
        while word:
            line = lines[-1]
            room = width - sum(map(len, line)) - (1 if line else 0)
            if sum(map(len, word)) <= room:
                line.extend(([" "] if line else []) + word)
                break
            if sum(map(len, word)) <= width:
                lines.append([])  # it fits on a line of its own
                continue
            head = _leading(word, room) or ([] if line else word[:1])  # on an empty line, one piece at least
            line.extend(([" "] if line and head else []) + head)
            word = word[len(head):]
            lines.append([])
    return [line for line in lines if line]


def _split_at_spaces(pieces):
    """The words between the spaces, none empty."""
    words = [[]]
    for piece in pieces:
        if piece == " ":
            words.append([])
        else:
            words[-1].append(piece)
    return [word for word in words if word]


def shape_label(m, n, k):
    return str(n) if m == n == k else f"{m}x{n}x{k}"


def gemm_flops(m, n, k):
    return 2.0 * m * n * k


def gemm_min_bytes(m, n, k):
    """fp32 A, B and C each moved once: the fewest bytes a GEMM can get by with."""
    return 4.0 * (m * k + k * n + m * n)


def gemm_intensity(m, n, k):
    return gemm_flops(m, n, k) / gemm_min_bytes(m, n, k)


def floor_ms(m, n, k, ceilings):
    """The roofline floor: max(FLOPs / peak, bytes / bandwidth)."""
    return max(gemm_flops(m, n, k) / ceilings.peak_tflops, gemm_min_bytes(m, n, k) / ceilings.bandwidth_tbs) / 1e9


def tflops(m, n, k, ms):
    return gemm_flops(m, n, k) / (ms * 1e9)


def draw_roofline(ax, ceilings, intensities):
    """The fp32 roofline on log-log axes wide enough for `intensities` and the ridge."""
    low = min(list(intensities) + [ceilings.ridge]) / 4
    high = max(list(intensities) + [ceilings.ridge]) * 4
    xs = [low * (high / low) ** (i / 200) for i in range(201)]
    ax.plot(xs, [ceilings.attainable_tflops(x) for x in xs], color="black", linewidth=1.5,
            label=f"roofline: {ceilings.peak_tflops:g} TFLOPS, {ceilings.bandwidth_tbs:g} TB/s")
    ax.axvline(ceilings.ridge, color="gray", linestyle=":", linewidth=1)
    ax.annotate(f"ridge {ceilings.ridge:.1f} FLOP/B", (ceilings.ridge, ceilings.peak_tflops),
                textcoords="offset points", xytext=(4, -14), fontsize=8, color="gray")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOPS")
    ax.grid(True, which="both", alpha=0.3)


SQLITE_MAGIC = b"SQLite format 3\x00"
SQLITE_JOURNAL_MAGIC = bytes([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
SQLITE_WAL_MAGICS = (bytes([0x37, 0x7f, 0x06, 0x82]), bytes([0x37, 0x7f, 0x06, 0x83]))


def prepare_out_dir(directory, names, input_path):
    """Creates the output folder if need be, and checks the files `names` it will hold, before
    any drawing: a path that cannot be a folder or be written into, and a name taken by a
    folder, by what is not a regular file (a FIFO, which reading would wait on), by the input
    `input_path`, or by an SQLite database (a slip that would lose every winner it holds) or its
    log or journal, are a UserError, so that no file is written then. A machine without
    matplotlib is told so first, with no folder made."""
    pyplot()
    if not directory:
        raise UserError("-o: the output folder is empty")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UserError(f"-o {directory} is not a folder")
    try:
        os.makedirs(directory, exist_ok=True)
        # A file made and removed: os.access answers for root as though every folder took one.
        handle, probe = tempfile.mkstemp(dir=directory, prefix=".write-check.")
        os.close(handle)
        os.remove(probe)
    except OSError as e:
        raise UserError(f"-o {directory}: cannot write into it: {e.strerror or e}")
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            raise UserError(f"{path} is a folder, where this writes a file")
        if not os.path.exists(path):
            continue
        if not os.path.isfile(path):
            raise UserError(f"{path} is not a regular file (a FIFO, a device or a socket), where this writes one")
        if os.path.samefile(path, input_path):
            raise UserError(f"{path} is the input, which this would replace; name another folder")
        try:
            with open(path, "rb") as f:
                start = f.read(len(SQLITE_MAGIC))
        except OSError:
            continue  # one this cannot read: the rename over it decides
        if start == SQLITE_MAGIC:
            raise UserError(f"{path} is an SQLite database, which this would replace; remove it first "
                            "or name another folder")
        if start[:8] == SQLITE_JOURNAL_MAGIC or start[:4] in SQLITE_WAL_MAGICS:
            raise UserError(f"{path} is an SQLite database's log or journal, which this would replace, losing "
                            "commits not yet in its database; name another folder")


def output_error(path, error):
    return OutputFailure(f"cannot write {path}: {error.strerror or error}")


def mode_for(path):
    """The permissions a file written at `path` gets: those of the file it replaces, else what
    the umask leaves of rw-rw-rw- (a temporary file starts at rw-------)."""
    if os.path.isfile(path):
        return stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# A partial file untouched this long is no run's at work: a write takes seconds.
STALE_PARTIAL_SECONDS = 3600


def sweep_stale_partials(directory, name):
    """Removes the partial files of `name` that a run killed outright (SIGKILL, a power cut)
    left in `directory`, where no handler of its own could remove them, as the C++ tools sweep
    a killed publisher's files: only regular files of write_replacing's names (mkstemp's 8
    characters between) last written over STALE_PARTIAL_SECONDS ago. A file that cannot be
    looked at or removed is left; the write goes on. As there (db/publish.h), the hour assumes
    a writer that runs: one stopped for an hour (SIGSTOP, a suspended machine), or a clock an
    hour ahead of the file server's, may lose its partial file to another run's sweep, and its
    write then fails (FileNotFoundError, an OutputFailure) or, where the file goes before
    write() opens it, makes it anew."""
    pattern = re.compile(r"\." + re.escape(name) + r"\.[a-z0-9_]{8}\.partial\Z")
    try:
        entries = os.scandir(directory or ".")
    except OSError:
        return
    now = time.time()
    with entries:
        for entry in entries:
            if not pattern.match(entry.name):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and now - info.st_mtime > STALE_PARTIAL_SECONDS:
                    os.remove(entry.path)
            except OSError:
                pass


def write_replacing(path, write):
    """Calls write(partial) to write the file at a new name of its own beside `path` (made
    exclusively: no file of the user's is taken for it), then renames it over `path`: a write
    that fails (a full disk, a file-size limit) or raises leaves an earlier file at `path` whole
    and nothing half-written. An OSError is an OutputFailure. Partial files of `path` that
    killed runs left are swept first (sweep_stale_partials)."""
    directory, name = os.path.split(path)
    sweep_stale_partials(directory, name)
    try:
        handle, partial = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.", suffix=".partial")
        os.close(handle)
    except OSError as e:
        raise output_error(path, e)
    try:
        mode = mode_for(path)
        write(partial)
        os.chmod(partial, mode)  # after the write: a read-only file's mode would refuse it
        os.replace(partial, path)
    except BaseException as e:
        try:
            os.remove(partial)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise output_error(path, e)
        raise


PNG_DPI = 120
# matplotlib refuses to draw an image of this many pixels or more on a side.
PNG_MOST_PIXELS = 2**16
# The most of one file's warnings said one by one: a name of a script the font lacks warns once
# for each of its characters.
NOTES_PER_FILE = 5


def save(fig, directory, name):
    """Lays `fig` out, writes it as the PNG `name` in `directory` (write_replacing) and closes it.
    What matplotlib warns of as it lays out and draws (labels too many to fit, a value too large
    for its axis, a glyph the font lacks) is said once the file is written, each warning once,
    in the script's own words and with the file it is about (its own warnings name a line of
    this file), and past NOTES_PER_FILE as a count. The warnings filters are left as Python
    and -W set them: those it hides (a library's DeprecationWarning) stay hidden."""
    path = os.path.join(directory, name)
    with warnings.catch_warnings(record=True) as caught:
        try:
            fig.tight_layout()
            write_replacing(path, lambda partial: fig.savefig(partial, dpi=PNG_DPI, format="png"))
        finally:
            pyplot().close(fig)
    messages = list(dict.fromkeys(str(w.message) for w in caught))  # each once, in the order they came
    for message in messages[:NOTES_PER_FILE]:
        note(f"{path} is written, but: {message}")
    if len(messages) > NOTES_PER_FILE:
        note(f"{path}: and {len(messages) - NOTES_PER_FILE} more warnings")
    return path
