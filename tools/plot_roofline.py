#!/usr/bin/env python3
"""Measured against predicted: the TFLOPS of the tuned winner and of cuBLAS for every shape,
next to the fp32 roofline, as a PNG, and a metrics.json with the shape table and the measured
GFLOP/s per shape.

Usage: plot_roofline.py RESULTS.json -o DIR [--peak-tflops T] [--bandwidth B]

Input, either of:
  * the tuner's table (`sgemm-tune --json`):
        {"gpu": "NVIDIA H200",
         "shapes": [{"name": "qkv", "m": 8, "n": 6144, "k": 4096, "weight": 32,
                     "winner": {"kernel": "async", "config": "async BM=...", "median_ms": 0.051},
                     "cublas_ms": 0.061}, ...]}
    "name", "transposes", "alignment" (the operands' alignment class in bytes, which
    sgemm-tune writes for every row) and "weight" may be left out (NN, none, weight 1); "winner" may be null when no kernel won; "cublas_ms" may be null when cuBLAS
    was not timed. A winner whose kernel is "cublas" is cuBLAS itself. The table's
    "peak_tflops" and "bandwidth_tbs", which sgemm-tune writes, are the ceilings of its own
    "% floor" and are used when present (one alone, with the other of the GPU named by "gpu").
    A run that did not finish its shapes ("interrupted", "untried_shapes", "fault") is said
    on standard error and carried into metrics.json, so that a partial table is not taken for
    a whole one.
  * sgemm-bench JSON (one object, or an array for a sweep): each size is a shape, its winner
    the fastest valid kernel other than cuBLAS, and cuBLAS as timed beside the winner (the
    winner's "cublas_ms"; in older JSON without it, the "cublas" row).

Writes into DIR:
  measured_vs_roofline.png  left, every shape's winner and cuBLAS at the shape's intensity
                            under the roofline; right, per shape, the roofline's attainable
                            TFLOPS beside the winner's and cuBLAS's
  metrics.json              {"gpu", "peak_tflops", "bandwidth_tbs", "input", and from a tune's
                             table "interrupted", "untried_shapes" and "fault",
                             "m12_gemms": [one row per shape: name, m, n, k, transposes,
                              alignment (null where the input has none), weight, flops, bytes,
                              intensity, floor_ms, roofline_gflops, winner_kernel, winner_config,
                              winner_ms, winner_gflops, winner_pct_of_floor, cublas_ms,
                              cublas_gflops, cublas_pct_of_floor, speedup_vs_cublas]}

The roofline is fp32's: 2MNK FLOPs at the FFMA peak, 4(MK + KN + MN) bytes (each operand moved
once) at the DRAM bandwidth; the floor is the larger of the two times, and "% of floor" is the
floor divided by the measured time. Ceilings: --peak-tflops and --bandwidth, else the table's
own, else as in plot_bench.py (the "gpu" name).
"""
import collections
import json
import math
import os

import plotting
import script_io
from plotting import pyplot
from script_io import UserError

PNG_NAME, METRICS_NAME = "measured_vs_roofline.png", "metrics.json"


def shapes_from_bench(entries):
    shapes = []
    for e in entries:
        rows = e["results"]
        cublas = next((r for r in rows if r["kernel"] == "cublas"), None)
        candidates = [r for r in rows if r["kernel"] != "cublas" and r["valid"]]
        best = min(candidates, key=lambda r: r["median_ms"], default=None)
        shapes.append({
            "name": "size " + plotting.shape_label(e["m"], e["n"], e["k"]),
            "m": e["m"], "n": e["n"], "k": e["k"], "transposes": e.get("trans") or "NN", "weight": 1,
            "winner": best and {"kernel": best["kernel"], "config": best.get("config", ""),
                                "median_ms": best["median_ms"]},
            # cuBLAS as timed in alternation with the winner, where the JSON has it; older
            # JSON has only cuBLAS's own row.
            "cublas_ms": best["cublas_ms"] if best and "cublas_ms" in best else cublas["median_ms"] if cublas else None,
        })
    return shapes


def check_tuner_table(data, path):
    """Every field of the tuner's table that the plot and metrics.json read, so that bad input is
    one message, not a traceback or a wrong number."""
    if not isinstance(data.get("shapes"), list):
        raise UserError(f"{path}: the tuner's table needs a \"shapes\" list")
    if not data["shapes"]:
        # A tune stopped, or out of budget, before its first shape writes such a table: said
        # as its status says it, not as input the plot cannot read.
        said = [RUN_STATUS[key](data[key]) for key in RUN_STATUS if data.get(key) and RUN_STATUS[key](data[key])]
        raise UserError(f"{path}: the tune finished no shape, so there is nothing to plot" +
                        (f" ({'; '.join(said)})" if said else ""))
    plotting.check_fields(data, "the table", path, [plotting.GPU_FIELD],
                          [*((key, *plotting.POSITIVE_NUMBER)
                             for key in ("peak_tflops", "bandwidth_tbs")),
                           ("interrupted", lambda v: isinstance(v, bool), "a boolean"),
                           ("untried_shapes", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                            "a whole number, 0 or more"),
                           ("fault", *plotting.TEXT)])
    for i, shape in enumerate(data["shapes"]):
        where = f"shapes[{i}]"
        plotting.check_fields(shape, where, path, plotting.SIZE_FIELDS,
                              [("name", *plotting.TEXT),
                               ("transposes", *plotting.TRANSPOSES),
                               ("alignment", *plotting.ALIGNMENT),
                               # Copied to metrics.json, never drawn: any finite weight the
                               # shapes CSV takes.
                               ("weight", lambda v: plotting.is_positive_number(v, below=math.inf),
                                "a positive number"),
                               ("cublas_ms", *plotting.POSITIVE_NUMBER)])
        if shape.get("winner") is not None:
            plotting.check_fields(shape["winner"], f"{where}.winner", path,
                                  [("kernel", *plotting.TEXT), ("median_ms", *plotting.POSITIVE_NUMBER)],
                                  [("config", *plotting.TEXT)])


# What a tune's table says of a run that did not finish its shapes, and how it is said.
RUN_STATUS = {
    "interrupted": lambda v: v and "the tune was stopped by a signal: the table holds the shapes it finished",
    "untried_shapes": lambda v: v and f"{v} shape(s) got no winner (--budget-s ran out) and are not in the table",
    "fault": lambda v: v and f"the tune ended on a GPU fault ({v}): the table holds the shapes before it",
}


def read_input(path):
    """(gpu name, shapes in the tuner's format, (peak TFLOPS, TB/s) as the input names them,
    each None where it does not, the run's status: RUN_STATUS's fields the table holds) from
    either input format. The tuner's table names the ceilings of its own "% floor"."""
    data = plotting.load_json(path)
    if isinstance(data, dict) and "shapes" in data:
        check_tuner_table(data, path)
        status = {key: data[key] for key in RUN_STATUS if data.get(key) is not None}
        return data["gpu"], data["shapes"], (data.get("peak_tflops"), data.get("bandwidth_tbs")), status
    entries = plotting.bench_entries(data, path)
    return entries[0]["gpu"], shapes_from_bench(entries), (None, None), {}


def metrics_row(shape, ceilings):
    m, n, k = shape["m"], shape["n"], shape["k"]
    floor = plotting.floor_ms(m, n, k, ceilings)
    winner = shape.get("winner") or {}
    winner_ms = winner.get("median_ms")
    cublas_ms = shape.get("cublas_ms")

    name = shape.get("name") or plotting.shape_label(m, n, k)

    def gflops(ms):
        return plotting.tflops(m, n, k, ms) * 1e3 if ms else None

    def pct(ms):
        return 100.0 * floor / ms if ms else None

    row = {
        "name": name,
        "m": m, "n": n, "k": k, "transposes": shape.get("transposes") or "NN", "alignment": shape.get("alignment"),
        "weight": shape.get("weight") or 1,
        "flops": plotting.gemm_flops(m, n, k),
        "bytes": plotting.gemm_min_bytes(m, n, k),
        "intensity": plotting.gemm_intensity(m, n, k),
        "floor_ms": floor,
        "roofline_gflops": gflops(floor),
        "winner_kernel": winner.get("kernel"),
        "winner_config": winner.get("config"),
        "winner_ms": winner_ms,
        "winner_gflops": gflops(winner_ms),
        "winner_pct_of_floor": pct(winner_ms),
        "cublas_ms": cublas_ms,
        "cublas_gflops": gflops(cublas_ms),
        "cublas_pct_of_floor": pct(cublas_ms),
        "speedup_vs_cublas": cublas_ms / winner_ms if winner_ms and cublas_ms else None,
    }
    # A time too small (or a ratio too large) for a float: metrics.json holds no infinity, and
    # the plot no such point.
    for key, value in row.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"{name}: its {key} ({m}x{n}x{k}, winner {winner_ms!r} ms, cuBLAS {cublas_ms!r} ms) "
                            "comes to a number past what a float holds")
    return row


def shape_labels(rows):
    """Each metrics row's label under its bars: its name, its dimensions where the name does not
    end with them, its transposes where not NN, and its alignment class where a shape tuned for
    two (tightly packed, and padded or offset rows) is two rows of one name."""
    rows_of = collections.Counter((r["name"], r["m"], r["n"], r["k"], r["transposes"]) for r in rows)

    def label(r):
        shape = plotting.shape_label(r["m"], r["n"], r["k"])
        name = plotting.figure_text(r["name"])
        text = name if r["name"].endswith(shape) else f"{name}\n{shape}"
        text = text if r["transposes"] == "NN" else f"{text} {r['transposes']}"
        alike = rows_of[(r["name"], r["m"], r["n"], r["k"], r["transposes"])] > 1
        return f"{text} align{r['alignment']}" if alike and r["alignment"] is not None else text

    return [label(r) for r in rows]


def plot(rows, gpu, ceilings, out_dir):
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [1, 1.4]})
    plotting.draw_roofline(left, ceilings, [r["intensity"] for r in rows])
    for key, marker, color, label in (("winner", "o", "tab:green", "winner"), ("cublas", "x", "tab:gray", "cuBLAS")):
        points = [(r["intensity"], r[f"{key}_gflops"] / 1e3) for r in rows if r[f"{key}_gflops"]]
        left.scatter([x for x, _ in points], [y for _, y in points], marker=marker, color=color, s=45, zorder=3,
                     label=label)
    left.legend(loc="upper left", fontsize=8)
    left.set_title(plotting.figure_text(f"fp32 roofline, {ceilings.name}"))

    labels = shape_labels(rows)
    xs = range(len(rows))
    width = 0.27
    series = (("roofline", "lightgray", "roofline (attainable)"), ("winner", "tab:green", "winner"),
              ("cublas", "tab:gray", "cuBLAS"))
    top = 0
    for i, (key, color, label) in enumerate(series):
        values = [(r[f"{key}_gflops"] or 0) / 1e3 for r in rows]
        right.bar([x + (i - 1) * width for x in xs], values, width, color=color, label=label)
        top = max([top] + values)
    right.set_xticks(list(xs))
    right.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    right.set_ylabel("TFLOPS")
    right.grid(True, axis="y", alpha=0.3)
    right.set_ylim(0, top * 1.15)  # room for the legend above the bars
    right.legend(loc="upper left", ncol=3, fontsize=8)
    right.set_title("measured against the roofline, per shape")
    fig.suptitle(plotting.figure_text(f"Tuned shapes on {gpu}"))
    return plotting.save(fig, out_dir, PNG_NAME)


def main():
    parser = plotting.argument_parser(__doc__, "the tuner's --json table, or sgemm-bench --json output",
                                      "folder for the PNG and metrics.json")
    args = parser.parse_args()
    gpu, shapes, (named_peak, named_bandwidth), status = read_input(args.results)
    ceilings = plotting.ceilings_for(gpu, args.peak_tflops or named_peak, args.bandwidth or named_bandwidth)
    plotting.prepare_out_dir(args.out_dir, [PNG_NAME, METRICS_NAME], args.results)
    rows = [metrics_row(s, ceilings) for s in shapes]
    metrics = {"gpu": gpu, "peak_tflops": ceilings.peak_tflops, "bandwidth_tbs": ceilings.bandwidth_tbs,
               "input": os.path.basename(args.results), **status, "m12_gemms": rows}
    for key, value in status.items():
        if RUN_STATUS[key](value):
            script_io.note(RUN_STATUS[key](value))
    path = os.path.join(args.out_dir, METRICS_NAME)

    def write(partial):
        with open(partial, "w") as f:
            json.dump(metrics, f, indent=2, allow_nan=False)
            f.write("\n")

    # metrics.json, the smaller file, first: a file-size limit between the two sizes stops the PNG
    # alone, one below both stops metrics.json (tests/decode/test_plots.py tries each).
    plotting.write_replacing(path, write)
    png = plot(rows, gpu, ceilings, args.out_dir)
    for written in (path, png):  # said once both are written: a standard output that fails stops no file
        script_io.say(written)


if __name__ == "__main__":
    script_io.run(main)
