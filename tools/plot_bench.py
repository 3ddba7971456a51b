#!/usr/bin/env python3
"""Plots sgemm-bench results: the speedup ladder, the kernels on the GPU's roofline, and
TFLOPS against N (or M, or K, where only that varies) for a sweep.

Usage: plot_bench.py RESULTS.json -o DIR [--size N] [--peak-tflops T] [--bandwidth B]

Input: the JSON of `sgemm-bench --json`: for one size an object {gpu, sm, size, m, n, k, iters,
results: [{kernel, config, median_ms, tflops, pct_cublas, valid, ...}]} (no pct_cublas for a
wrong result), for a sweep an array of such objects.

Writes three PNGs into DIR:
  bench_ladder.png    TFLOPS and % of cuBLAS per kernel at one size (--size, else the largest)
  bench_roofline.png  each kernel at its effective arithmetic intensity under the GPU's fp32
                      roofline, at the same size
  bench_sweep.png     TFLOPS against the size the sweep varies (N, else M, else K), one line per
                      kernel (a single point each for one size)

The roofline's ceilings come from the table in plotting.py, found by the JSON's "gpu" name
(the H200: 66.9 TFLOPS fp32 FFMA peak, 4.29 TB/s, both measured), or from --peak-tflops and
--bandwidth. For a GPU the table lacks, given neither, the roofline is left out (said on
standard error) and the other two are drawn. A file holds one GPU and one layout (sgemm-bench
writes them so): entries of two are refused, which would be drawn as one line under one name,
as are entries that vary in more than the swept size (two shapes at one N).
The ladder draws a row a result, so a size of more than 990 results is refused (matplotlib
draws no image of 2^16 pixels on a side).

Effective arithmetic intensity, estimated from the tile in the kernel's "config" string: a block
that computes a BM x BN tile of C loads BM + BN floats from global memory per step of k and
does BM * BN FMAs with them: 2*BM*BN FLOPs per 4*(BM+BN) bytes, so AI = BM*BN / (2*(BM+BN))
FLOP/B. naive reads both operands for every FMA, a 1 x 1 tile (0.25 FLOP/B); "smem TILE=T" is a
T x T tile (T/4); blocktile, vec4, async and warptile name BM and BN; decode's tile is MT x BN. The caches can do better than this
estimate, and no kernel moves fewer bytes than the problem's own minimum, so the estimate is
capped at 2MNK / (4(MK + KN + MN)); cuBLAS, whose tiles are not known, is placed at that cap.

A kernel is named by its family, or, where two configurations of one family ran (a --config
beside the defaults), by its configuration. A result that failed the check is marked: hatched in
the ladder, a hollow point on the roofline, a cross on the sweep.
"""
import math
import os
import re

import plotting
import script_io
from plotting import pyplot
from script_io import UserError, note

LADDER_PNG, ROOFLINE_PNG, SWEEP_PNG = OUTPUTS = ("bench_ladder.png", "bench_roofline.png", "bench_sweep.png")

# The ladder's height in inches: a header, and a row a result. Past LADDER_MOST_RESULTS it would
# be an image matplotlib refuses to draw (a traceback, and none of the three plots drawn).
LADDER_HEADER_INCHES, LADDER_ROW_INCHES = 1.6, 0.55
LADDER_MOST_RESULTS = int((plotting.PNG_MOST_PIXELS / plotting.PNG_DPI - LADDER_HEADER_INCHES) / LADDER_ROW_INCHES)
# The ladder's labels sit at the left of its rows, wrapped at this many characters (a
# warptile configuration is some 70), and the roofline's beside its points likewise.
LADDER_LABEL_WIDTH = 36


def tile_of(kernel, config):
    """(BM, BN) of a ladder kernel's C tile per block, or None when the config (text, or None)
    names none; a tile of 0 is none, and so is one of more than 9 digits, which no GPU has (and
    whose arithmetic would pass what a float holds)."""
    if kernel == "naive":
        return (1, 1)
    values = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", config or "") if len(value) <= 9}
    tile = (values["TILE"],) * 2 if "TILE" in values else (values.get("BM", values.get("MT")), values.get("BN"))
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
    sizes = ", ".join(str(e["size"]) for e in entries if e.get("size") is not None)
    raise UserError(f"no results for --size {size}; "
                    + (f"the file has {sizes}" if sizes else "the file names no sizes"))


def labeller(results):
    """A function from a result to its label: its family's name, or its configuration where
    `results` hold two configurations of that family (a --config beside the defaults), which
    sgemm-bench names alike. Across the sizes of a sweep a configuration keeps its label.
    The label is as the JSON has it: a figure draws it through plotting.figure_text."""
    configs = {}
    for r in results:
        configs.setdefault(r["kernel"], set()).add(r.get("config"))
    return lambda r: r["kernel"] if len(configs[r["kernel"]]) == 1 else r.get("config") or r["kernel"]


def colors(labels):
    """A colour per label: cuBLAS grey, the others along viridis in their order."""
    cmap = pyplot().get_cmap("viridis")
    others = [label for label in labels if label != "cublas"]
    by_label = {label: cmap(0.15 + 0.7 * i / max(1, len(others) - 1)) for i, label in enumerate(others)}
    by_label["cublas"] = "tab:gray"
    return by_label


def transposes(entry):
    """The entry's transposes: NN where it has none (older sgemm-bench JSON ran NN alone)."""
    return entry.get("trans") or "NN"


def layout(entry):
    """The transposes as titles give them: nothing for NN."""
    return "" if transposes(entry) == "NN" else f" {transposes(entry)}"


def title(entry):
    return plotting.figure_text(f"{entry['gpu']}, M={entry['m']} N={entry['n']} K={entry['k']}{layout(entry)}")


def bar_texts(values):
    """The label of each bar: its value, or a dash where there is none (no % of cuBLAS for a
    wrong result, as sgemm-bench's table prints it), which a bar of 0.0 would misstate."""
    return [f"{v:.1f}" if v is not None else "-" for v in values]


def plot_ladder(entry, out_dir):
    # A row a kernel, its label at the left, wrapped: rotated labels under columns ran into each
    # other and off the figure past a few configurations.
    results = entry["results"]
    label = labeller(results)
    names = [plotting.figure_text(label(r) + ("" if r["valid"] else " (invalid)"), LADDER_LABEL_WIDTH)
             for r in results]
    color = colors([label(r) for r in results])
    rows = range(len(results))
    fig, (left, right) = pyplot().subplots(1, 2, sharey=True,
                                           figsize=(12, LADDER_HEADER_INCHES + LADDER_ROW_INCHES * len(results)))
    for ax, key, axis_label in ((left, "tflops", "TFLOPS"), (right, "pct_cublas", "% of cuBLAS")):
        values = [r.get(key) for r in results]  # pct_cublas is absent without a cuBLAS row, or for a wrong result
        bars = ax.barh(rows, [v or 0 for v in values], color=[color[label(r)] for r in results])
        for bar, r in zip(bars, results):
            if not r["valid"]:
                bar.set_hatch("//")
        ax.bar_label(bars, labels=bar_texts(values), fontsize=8, padding=2)
        ax.margins(x=0.12)  # room for the value past the longest bar
        ax.set_xlabel(axis_label)
        ax.grid(True, axis="x", alpha=0.3)
    left.set_yticks(list(rows))
    left.set_yticklabels(names, fontsize=8)
    left.invert_yaxis()  # the results' order from the top, as sgemm-bench's table lists them
    right.axvline(100, color="tab:gray", linestyle="--", linewidth=1)
    fig.suptitle(f"SGEMM ladder: {title(entry)}")
    return plotting.save(fig, out_dir, LADDER_PNG)


def plot_roofline(entry, ceilings, out_dir):
    placed = []
    for r in entry["results"]:
        intensity = effective_intensity(r, entry)
        if intensity is None:
            note(f"{r['kernel']}: no tile in '{r.get('config')}', left off the roofline")
        else:
            placed.append((r, intensity))
    fig, ax = pyplot().subplots(figsize=(8, 5.5))
    plotting.draw_roofline(ax, ceilings, [ai for _, ai in placed])
    label = labeller(entry["results"])
    color = colors([label(r) for r in entry["results"]])
    for r, intensity in placed:
        ax.scatter([intensity], [r["tflops"]], s=50, zorder=3, marker="s" if r["kernel"] == "cublas" else "o",
                   edgecolors=color[label(r)], facecolors=color[label(r)] if r["valid"] else "none")
    # Each point's label, wrapped as the ladder's are, on the side with more room: a warptile
    # configuration's ran on past the figure's right edge from a point in the middle.
    low, high = ax.get_xlim()
    for r, intensity in placed:
        right_half = math.log(intensity / low) > math.log(high / low) / 2
        ax.annotate(plotting.figure_text(f"{label(r)} {r['tflops']:.1f}" + ("" if r["valid"] else " (invalid)"),
                                         LADDER_LABEL_WIDTH),
                    (intensity, r["tflops"]), textcoords="offset points", xytext=(-6, -3) if right_half else (6, -3),
                    ha="right" if right_half else "left", va="top", fontsize=8)
    ax.set_title(f"Ladder on the fp32 roofline ({plotting.figure_text(ceilings.name)}): {title(entry)}\n"
                 "kernels at their tile's DRAM intensity BM*BN/(2(BM+BN)), cuBLAS at the problem's;\n"
                 "a point above the roof gets reuse from L1/L2 that the tile estimate does not count",
                 fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    return plotting.save(fig, out_dir, ROOFLINE_PNG)


def sweep_axis(entries):
    """The size a sweep varies, "n", "m" or "k": N where it varies (a square sweep's too), else
    M (a batch sweep at one N and K), else K; "n" for one size."""
    return next((key for key in ("n", "m", "k") if len({e[key] for e in entries}) > 1), "n")


def sweep_lines(entries):
    """{label: [(size, TFLOPS, valid), ...] by size}, the size the one sweep_axis names: a line
    per kernel configuration, in the order they first come."""
    axis = sweep_axis(entries)
    entries = sorted(entries, key=lambda e: e[axis])
    label = labeller([r for e in entries for r in e["results"]])
    lines = {}
    for e in entries:
        for r in e["results"]:
            lines.setdefault(plotting.figure_text(label(r)), []).append((e[axis], r["tflops"], r["valid"]))
    return lines


def plot_sweep(entries, out_dir):
    axis = sweep_axis(entries)
    lines = sweep_lines(entries)
    color = colors(list(lines))
    fig, ax = pyplot().subplots(figsize=(8, 5))
    for name, points in lines.items():
        ax.plot([n for n, _, _ in points], [t for _, t, _ in points], marker="o", color=color[name], label=name,
                linestyle="--" if name == "cublas" else "-")
    wrong = [(n, t) for points in lines.values() for n, t, valid in points if not valid]
    if wrong:
        ax.scatter([n for n, _ in wrong], [t for _, t in wrong], marker="x", s=80, color="tab:red", zorder=4,
                   label="failed the check")
    square = all(e["m"] == e["n"] == e["k"] for e in entries)
    ax.set_xlabel(axis.upper() + (" (M = N = K)" if square else ""))
    ax.set_xticks(sorted({e[axis] for e in entries}))
    ax.set_ylabel("TFLOPS")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(plotting.figure_text(f"SGEMM ladder against {axis.upper()}: {entries[0]['gpu']}")
                 + "".join(sorted({layout(e) for e in entries})))
    return plotting.save(fig, out_dir, SWEEP_PNG)


def main():
    parser = plotting.argument_parser(__doc__, "sgemm-bench --json output", "folder for the PNGs")
    parser.add_argument("--size", help="which size of a sweep the ladder and roofline show (default: the largest)")
    args = parser.parse_args()
    entries = plotting.bench_entries(plotting.load_json(args.results), args.results)
    layouts = sorted({transposes(e) for e in entries})
    if len(layouts) > 1:
        raise UserError(f"{args.results}: entries of more than one layout ({', '.join(layouts)}): "
                        "plot each layout's apart")
    # The sweep draws a line over one size: entries that vary another way too (a file joined by
    # hand, M and N both changing) were drawn as one zigzag line under that size's name.
    axis = sweep_axis(entries)
    shapes_at = {}
    for e in entries:
        shapes_at.setdefault(e[axis], set()).add((e["m"], e["n"], e["k"]))
    if any(len(shapes) > 1 for shapes in shapes_at.values()):
        raise UserError(f"{args.results}: entries that vary in more than {axis.upper()} (two shapes at one "
                        f"{axis.upper()}): the sweep draws one size's line; plot each sweep apart")
    entry = pick_entry(entries, args.size)
    if len(entry["results"]) > LADDER_MOST_RESULTS:
        raise UserError(f"{args.results}: {len(entry['results'])} results at M={entry['m']} N={entry['n']} "
                        f"K={entry['k']}: the ladder draws at most {LADDER_MOST_RESULTS}, a row each")
    ceilings = plotting.ceilings_for(entry["gpu"], args.peak_tflops, args.bandwidth, needed=False)
    if ceilings is None:
        earlier = os.path.exists(os.path.join(args.out_dir, ROOFLINE_PNG))
        note(f"no built-in ceilings for GPU '{entry['gpu']}', so {ROOFLINE_PNG} is not drawn (--peak-tflops and "
             "--bandwidth give them)"
             + (f"; the earlier {ROOFLINE_PNG} in {args.out_dir} is of another run" if earlier else ""))
    plotting.prepare_out_dir(args.out_dir, [name for name in OUTPUTS if ceilings or name != ROOFLINE_PNG],
                             args.results)
    written = [plot_ladder(entry, args.out_dir)]
    if ceilings:
        written.append(plot_roofline(entry, ceilings, args.out_dir))
    written.append(plot_sweep(entries, args.out_dir))
    for path in written:  # said once all are written: a standard output that fails stops no file
        script_io.say(path)


if __name__ == "__main__":
    script_io.run(main)
