"""What the plot scripts share: the GPUs' fp32 ceilings, reading sgemm-bench JSON, a GEMM's
roofline figures, and drawing a roofline. matplotlib draws headless (the Agg backend), so the
scripts run on machines without a display.
"""
import argparse
import json
import os
import sys
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

# fp32 FFMA peak (TFLOPS) and DRAM bandwidth (TB/s) of tuner/decode/gpu_spec.cpp's built-in GPUs
# (tests/decode/test_plots.py checks that the two agree), each with the words that find it in a
# CUDA device name such as "NVIDIA H200". The H200's figures were measured on this project's H200.
FP32_CEILINGS = {
    "T4": (("T4",), 8.1, 0.320),
    "A100-80GB": (("A100",), 19.5, 2.039),
    "RTX 3090": (("3090",), 35.6, 0.936),
    "H100 SXM": (("H100",), 67.0, 3.35),
    "H200": (("H200",), 66.9, 4.29),
}


class UserError(Exception):
    """Bad input: the script prints the message and exits with 1."""


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


def ceilings_for(gpu_name, peak_tflops=None, bandwidth_tbs=None):
    """The fp32 ceilings of the GPU named by a CUDA device name, each replaced by the override
    when one is given. A GPU not in the table needs both overrides."""
    for key, (words, peak, bandwidth) in FP32_CEILINGS.items():
        if all(word in gpu_name for word in words):
            return Ceilings(key, peak_tflops or peak, bandwidth_tbs or bandwidth)
    if peak_tflops is None or bandwidth_tbs is None:
        known = ", ".join(FP32_CEILINGS)
        raise UserError(f"no built-in ceilings for GPU '{gpu_name}' (known: {known}): "
                        "give --peak-tflops and --bandwidth")
    return Ceilings(gpu_name, peak_tflops, bandwidth_tbs)


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        """Bad arguments are user errors: exit 1, as the C++ tools do (argparse would exit 2)."""
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def argument_parser(doc, results_help, out_help):
    """The scripts' common command line: the input JSON, -o DIR and the ceiling overrides; the
    script's docstring is its --help."""
    parser = _ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                             epilog="\n\n".join(doc.split("\n\n")[1:]))
    parser.add_argument("results", help=results_help)
    parser.add_argument("-o", "--out-dir", required=True, help=out_help)
    parser.add_argument("--peak-tflops", type=positive_float,
                        help="fp32 peak in TFLOPS (default: from the GPU named in the input)")
    parser.add_argument("--bandwidth", type=positive_float,
                        help="memory bandwidth in TB/s (default: from the GPU named in the input)")
    return parser


def positive_float(text):
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise UserError(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not valid JSON: {e}")


def bench_entries(data, path):
    """sgemm-bench JSON as a list of entries, one per size: a sweep is an array of them."""
    entries = data if isinstance(data, list) else [data]
    for entry in entries:
        if not isinstance(entry, dict) or not all(key in entry for key in ("gpu", "m", "n", "k", "results")):
            raise UserError(f"{path}: not sgemm-bench JSON (each entry needs gpu, m, n, k and results)")
    if not entries:
        raise UserError(f"{path}: no entries")
    return entries


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


def save(fig, directory, name):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(path)
    return path


def run(main):
    """Runs a script's main(), turning a UserError into a one-line message and exit code 1."""
    try:
        main()
    except UserError as e:
        print(f"{os.path.basename(sys.argv[0])}: {e}", file=sys.stderr)
        sys.exit(1)
