#!/usr/bin/env python3
"""Plots sgemm-bench results: the speedup ladder, the kernels on the GPU's roofline, and
TFLOPS against N for a sweep.

Usage: plot_bench.py RESULTS.json -o DIR [--size N] [--peak-tflops T] [--bandwidth B]

Input: the JSON of `sgemm-bench --json`: for one size an object {gpu, sm, size, m, n, k, iters,
results: [{kernel, config, median_ms, tflops, pct_cublas, valid, ...}]}, for a sweep an array of
such objects.

Writes three PNGs into DIR:
  bench_ladder.png    TFLOPS and % of cuBLAS per kernel at one size (--size, else the largest)
  bench_roofline.png  each kernel at its effective arithmetic intensity under the GPU's fp32
                      roofline, at the same size
  bench_sweep.png     TFLOPS against N, one line per kernel (a single point each for one size)

The roofline's ceilings come from the table in plotting.py, found by the JSON's "gpu" name
(the H200: 66.9 TFLOPS fp32 FFMA peak, 4.29 TB/s, both measured), or from --peak-tflops and
--bandwidth.

Effective arithmetic intensity, estimated from the tile in the kernel's "config" string: a block
that computes a BM x BN tile of C loads BM + BN floats from global memory per step of k and
does BM * BN FMAs with them: 2*BM*BN FLOPs per 4*(BM+BN) bytes, so AI = BM*BN / (2*(BM+BN))
FLOP/B. naive reads both operands for every FMA, a 1 x 1 tile (0.25 FLOP/B); "smem TILE=T" is a
T x T tile (T/4); blocktile, vec4 and async name BM and BN. The caches can do better than this
estimate, and no kernel moves fewer bytes than the problem's own minimum, so the estimate is
capped at 2MNK / (4(MK + KN + MN)); cuBLAS, whose tiles are not known, is placed at that cap.

Exit status: 0 the files are written; 1 bad arguments or input, or an output folder that cannot
be made or written into (no file is written); 2 matplotlib is not installed, or a file failed
as it was written (an earlier file of that name is left whole, and no half-written one is left
beside it).
"""
import re
import sys

import plotting
from plotting import UserError, pyplot


def tile_of(kernel, config):
    """(BM, BN) of a ladder kernel's C tile per block, or None when the config (text, or None)
    names none; a tile of 0 is none."""
    if kernel == "naive":
        return (1, 1)
    values = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", config or "")}
    tile = (values["TILE"],) * 2 if "TILE" in values else (values.get("BM"), values.get("BN"))
    return tile if all(tile) else None


def effective_intensity(result, entry):
    """FLOP/B of a kernel as the docstring above estimates it; None when it cannot be told."""
    cap = plotting.gemm_intensity(entry["m"], entry["n"], entry["k"])
    if result["kernel"] == "cublas":
        return cap
    tile = tile_of(result["kernel"], result.get("config"))
    if tile is None:
        return None
    bm, bn = tile
    return min(cap, bm * bn / (2.0 * (bm + bn)))


def pick_entry(entries, size):
    if size is None:
        return max(entries, key=lambda e: e["m"] * e["n"] * e["k"])
    for entry in entries:
        if str(entry.get("size")) == str(size):
            return entry
    raise UserError(f"no results for --size {size}; the file has " + ", ".join(str(e.get("size")) for e in entries))


def colors(results):
    cmap = pyplot().get_cmap("viridis")
    others = [r for r in results if r["kernel"] != "cublas"]
    by_kernel = {r["kernel"]: cmap(0.15 + 0.7 * i / max(1, len(others) - 1)) for i, r in enumerate(others)}
    by_kernel["cublas"] = "tab:gray"
    return by_kernel


def title(entry):
    return f"{entry['gpu']}, M={entry['m']} N={entry['n']} K={entry['k']}"


def plot_ladder(entry, out_dir):
    results = entry["results"]
    names = [r["kernel"] + ("" if r.get("valid", True) else " (invalid)") for r in results]
    color = colors(results)
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4.2))
    for ax, key, label in ((left, "tflops", "TFLOPS"), (right, "pct_cublas", "% of cuBLAS")):
        values = [r.get(key) or 0 for r in results]  # pct_cublas is absent without a cuBLAS row
        bars = ax.bar(names, values, color=[color[r["kernel"]] for r in results])
        for bar, r in zip(bars, results):
            if not r.get("valid", True):
                bar.set_hatch("//")
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=30)
        ax.grid(True, axis="y", alpha=0.3)
    right.axhline(100, color="tab:gray", linestyle="--", linewidth=1)
    fig.suptitle(f"SGEMM ladder: {title(entry)}")
    return plotting.save(fig, out_dir, "bench_ladder.png")


def plot_roofline(entry, ceilings, out_dir):
    placed = []
    for r in entry["results"]:
        intensity = effective_intensity(r, entry)
        if intensity is None:
            print(f"plot_bench.py: {r['kernel']}: no tile in '{r.get('config')}', left off the roofline",
                  file=sys.stderr)
        else:
            placed.append((r, intensity))
    fig, ax = pyplot().subplots(figsize=(8, 5.5))
    plotting.draw_roofline(ax, ceilings, [ai for _, ai in placed])
    color = colors(entry["results"])
    for r, intensity in placed:
        ax.scatter([intensity], [r["tflops"]], color=color[r["kernel"]], s=50, zorder=3,
                   marker="s" if r["kernel"] == "cublas" else "o")
        ax.annotate(f"{r['kernel']} {r['tflops']:.1f}", (intensity, r["tflops"]), textcoords="offset points",
                    xytext=(6, -3), fontsize=8)
    ax.set_title(f"Ladder on the fp32 roofline ({ceilings.name}): {title(entry)}\n"
                 "kernels at their tile's DRAM intensity BM*BN/(2(BM+BN)), cuBLAS at the problem's;\n"
                 "a point above the roof gets reuse from L1/L2 that the tile estimate does not count",
                 fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    return plotting.save(fig, out_dir, "bench_roofline.png")


def plot_sweep(entries, out_dir):
    entries = sorted(entries, key=lambda e: e["n"])
    kernels = []
    for e in entries:
        kernels += [r["kernel"] for r in e["results"] if r["kernel"] not in kernels]
    color = colors([{"kernel": k} for k in kernels])
    fig, ax = pyplot().subplots(figsize=(8, 5))
    for kernel in kernels:
        points = [(e["n"], r["tflops"]) for e in entries for r in e["results"] if r["kernel"] == kernel]
        ax.plot([n for n, _ in points], [t for _, t in points], marker="o", color=color[kernel], label=kernel,
                linestyle="--" if kernel == "cublas" else "-")
    square = all(e["m"] == e["n"] == e["k"] for e in entries)
    ax.set_xlabel("N" + (" (M = N = K)" if square else ""))
    ax.set_xticks([e["n"] for e in entries])
    ax.set_ylabel("TFLOPS")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"SGEMM ladder against N: {entries[0]['gpu']}")
    return plotting.save(fig, out_dir, "bench_sweep.png")


def main():
    parser = plotting.argument_parser(__doc__, "sgemm-bench --json output", "folder for the PNGs")
    parser.add_argument("--size", help="which size of a sweep the ladder and roofline show (default: the largest)")
    args = parser.parse_args()
    entries = plotting.bench_entries(plotting.load_json(args.results), args.results)
    entry = pick_entry(entries, args.size)
    ceilings = plotting.ceilings_for(entry["gpu"], args.peak_tflops, args.bandwidth)
    plotting.prepare_out_dir(args.out_dir)
    plot_ladder(entry, args.out_dir)
    plot_roofline(entry, ceilings, args.out_dir)
    plot_sweep(entries, args.out_dir)


if __name__ == "__main__":
    plotting.run(main)
