// sgemm-bench: the SGEMM ladder against cuBLAS on this GPU.
//
// Every ladder kernel runs at its default configuration. Each is first checked against
// cuBLAS on the same random operands with its output poisoned with NaN, then timed with
// CUDA events, after a warm-up, with the caches made cold before every run (tuner/timing.h);
// the median is reported. cuBLAS is timed again in alternation with each kernel, and the
// kernel's "% cuBLAS" is held to that median: a kernel timed minutes after cuBLAS's own row,
// at other clocks, would otherwise meet a stale bar. For a decode batch, cuBLAS at M = 1 (the
// bar of "x M=1") is timed in alternation with every row the same way.
// With --timeline, the --config kernels of the families that mark per-block timelines also
// run in a timeline build (tuner/timeline.h), which shows where a launch's time goes.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "db/shape_key.h"
#include "src/cuda/cublas_handle.h"
#include "src/cuda/device.h"
#include "src/cuda/stream.h"
#include "src/families/ladder_families.h"
#include "src/families/registry.h"
#include "src/jit/loaded_kernel.h"
#include "src/util/json.h"
#include "src/util/text.h"
#include "tools/cli_lists.h"
#include "tools/cli_output.h"
#include "tools/cli_parse.h"
#include "tuner/gemm_problem.h"
#include "tuner/timeline.h"
#include "tuner/timing.h"

namespace po = boost::program_options;
using namespace sgemm;

namespace {

// --iters' ceiling: every timed run holds two CUDA events (and a row's runs of cuBLAS beside
// it theirs) until all are read back, and a count near INT_MAX would ask for billions of them
// before the first result.
constexpr int kMostTimedRuns = 100000;
// --warmup's, the same: the warm-ups stop at --max-seconds, but a count of billions of fast
// runs would be hours of launches under an infinite one.
constexpr int kMostWarmUpRuns = 100000;

struct Shape {
    int m, n, k;
    bool square() const { return m == n && n == k; }
    std::string label() const {
        return square() ? std::to_string(n) : std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    }
};

// Leading dimensions in floats as --lda, --ldb and --ldc give them; 0 is tight (the stored row
// length).
struct LeadingDims {
    int lda = 0, ldb = 0, ldc = 0;
};

struct Row {
    std::string kernel, config;
    TimingStats timing;
    double cublas_ms = 0.0;  // cuBLAS's median timed in alternation with this row (its own, for cuBLAS's row)
    // For a decode batch (1 < M <= 64): cuBLAS's median at M = 1, timed in alternation too.
    std::optional<double> cublas_one_row_ms;
    Accuracy accuracy;
};

// Launches of a timeline build recorded per shape; the one with the median event time is shown.
constexpr int kTimelineLaunches = 5;

// Why `k` cannot run `call` (its layout, alignment class and shape), or "".
std::string skip_reason(const LoadedKernel& k, const ShapeKey& call, Arch arch) {
    const Family& f = k.family();
    if (!f.reads_transposes(k.values(), call.trans_a, call.trans_b))
        return f.describe(k.values()) + " does not read the " + call.transposes() + " layout";
    if (const int needs = f.required_alignment(k.values()); needs > call.alignment)
        return f.describe(k.values()) + " needs " + std::to_string(needs) + "-byte aligned operands; these are " +
               std::to_string(call.alignment) + "-byte aligned (pointers and leading dimensions)";
    return f.unsupported_shape_reason(k.values(), call.M, call.N, call.K, arch);
}

// The timeline build's result is checked like any kernel's, then kTimelineLaunches launches
// are recorded; the summary of the one with the median event time is printed and returned.
Json timeline_of(const LoadedKernel& k, const Shape& shape, GemmProblem& problem, CacheFlusher& flusher, Stream& stream,
                 bool& all_ok) {
    problem.reserve_workspace(timeline_workspace_bytes(k, shape.m, shape.n, shape.k));
    problem.poison_output(stream.get());
    k.launch(problem.args(), stream.get());
    const Accuracy accuracy = problem.check_output();
    std::vector<LaunchTimeline> launches;
    for (int i = 0; i < kTimelineLaunches; ++i) launches.push_back(record_timeline(k, problem, flusher, stream.get()));
    std::sort(launches.begin(), launches.end(),
              [](const LaunchTimeline& a, const LaunchTimeline& b) { return a.event_us < b.event_us; });
    const TimelineSummary s = summarize(launches[kTimelineLaunches / 2]);
    std::printf("\ntimeline of %s (the launch with the median event time of %d; times from the first block's start)%s\n%s\n",
                k.family().describe(k.values()).c_str(), kTimelineLaunches,
                accuracy.ok() ? "" : "  [WRONG RESULT]", describe(s).c_str());
    if (!accuracy.ok()) all_ok = false;
    Json t = Json::object();
    t.set("config", k.family().describe(k.values()))
        .set("valid", accuracy.ok())
        .set("blocks", s.blocks)
        .set("sms", s.sms)
        .set("event_us", s.event_us)
        .set("loops_end_us", s.loops_end_us)
        .set("last_end_us", s.last_end_us)
        .set("summing_blocks", s.summing_blocks);
    if (s.summing_blocks > 0) t.set("store_us", s.store_us).set("arrive_us", s.arrive_us).set("sum_us", s.sum_us);
    return t;
}

Json bench_shape(const Shape& shape, const ShapeKey& layout, const LeadingDims& ld,
                 const std::vector<std::unique_ptr<LoadedKernel>>& kernels,
                 const std::vector<std::unique_ptr<LoadedKernel>>& timeline_kernels, const CublasHandle& cublas,
                 const TimingPlan& plan, CacheFlusher& flusher, Stream& stream, const DeviceInfo& device, bool& all_ok) {
    std::fprintf(stderr, "[%s] preparing operands and the cuBLAS reference...\n", shape.label().c_str());
    ProblemSpec spec;
    spec.M = shape.m, spec.N = shape.n, spec.K = shape.k;
    spec.trans_a = layout.trans_a, spec.trans_b = layout.trans_b;
    spec.lda = ld.lda, spec.ldb = ld.ldb, spec.ldc = ld.ldc;
    GemmProblem problem(spec, cublas, stream.get());
    // A decode batch reads the same weights as batch 1: cuBLAS's time for one row is the bar
    // a skinny kernel is held to. Its operands are made first, so that every row is timed
    // alongside it.
    std::unique_ptr<GemmProblem> one_row;
    std::function<void(cudaStream_t)> run_one_row;
    if (shape.m > 1 && shape.m <= 64) {
        ProblemSpec one = spec;
        one.M = 1;
        one_row = std::make_unique<GemmProblem>(one, cublas, stream.get());
        run_one_row = [&, one_args = one_row->args()](cudaStream_t s) {
            cublas.sgemm(one_args, s, spec.trans_a, spec.trans_b);
        };
    }

    std::vector<Row> rows;
    // cuBLAS's launch, as the kernels' rows time it alongside them; null for cuBLAS's own row.
    std::function<void(cudaStream_t)> cublas_alongside;
    auto measure = [&](const std::string& name, const std::string& config,
                       const std::function<void(cudaStream_t)>& launch) {
        std::fprintf(stderr, "[%s] %-10s checking and timing...\n", shape.label().c_str(), name.c_str());
        Row row;
        row.kernel = name, row.config = config;
        problem.poison_output(stream.get());
        launch(stream.get());
#ifdef SGEMM_BENCH_SPOILS_KERNEL_RESULTS
        // Only in the test build of tests/meson.build: each kernel's result, not cuBLAS's, gets
        // a wrong first element, so that a test sees a failed check reach the table, the JSON
        // and exit status 3 (no kernel of the families computes a wrong result on purpose).
        if (name != "cublas") {
            const float wrong = 1e30f;  // pageable: copied out before the call returns
            if (cudaMemcpyAsync(problem.args().C, &wrong, sizeof wrong, cudaMemcpyHostToDevice, stream.get()) !=
                cudaSuccess)
                throw Error("spoiling the result for the test failed");
        }
#endif
        row.accuracy = problem.check_output();
        std::vector<std::function<void(cudaStream_t)>> launches = {launch};
        if (cublas_alongside) launches.push_back(cublas_alongside);
        if (run_one_row) launches.push_back(run_one_row);
        const std::vector<TimingStats> stats = time_in_alternation(launches, plan, flusher, stream.get());
        row.timing = stats.front();
        row.cublas_ms = cublas_alongside ? stats[1].median_ms : row.timing.median_ms;
        if (run_one_row) row.cublas_one_row_ms = stats.back().median_ms;
        if (!row.accuracy.ok()) {
            all_ok = false;
            std::fprintf(stderr, "[%s] %s FAILED validation: %s\n", shape.label().c_str(), name.c_str(),
                         row.accuracy.verdict().c_str());
        }
        rows.push_back(row);
    };
    // Room for the largest workspace first, so that the pointer in args stays; each kernel then
    // declares its own below, and a write past it fails the check.
    for (const auto& k : kernels)
        problem.reserve_workspace(k->workspace_bytes(shape.m, shape.n, shape.k, problem.call_alignment()));
    const SgemmArgs args = problem.args();
    ShapeKey call = layout;
    call.M = shape.m, call.N = shape.n, call.K = shape.k;
    call.alignment = problem.call_alignment();
    const auto run_cublas = [&](cudaStream_t s) { cublas.sgemm(args, s, spec.trans_a, spec.trans_b); };
    measure("cublas", "default math (fp32 FFMA)", run_cublas);
    cublas_alongside = run_cublas;
    for (const auto& k : kernels) {
        const std::string why = skip_reason(*k, call, Arch{device.sm()});
        if (!why.empty()) {
            std::fprintf(stderr, "[%s] skipping %s: %s\n", shape.label().c_str(), k->family().name.c_str(), why.c_str());
            continue;
        }
        problem.reserve_workspace(k->workspace_bytes(shape.m, shape.n, shape.k, call.alignment));
        measure(k->family().name, k->family().describe(k->values()), [&](cudaStream_t s) { k->launch(args, s); });
    }
    const std::optional<double> cublas_one_row_ms = rows.front().cublas_one_row_ms;  // timed beside cuBLAS's row

    std::printf("\nM=%d N=%d K=%d %s (lda %d, ldb %d, ldc %d) on %s (sm_%d), median of up to %d runs, caches cold\n",
                shape.m, shape.n, shape.k, layout.transposes().c_str(), args.lda, args.ldb, args.ldc,
                device.name.c_str(), device.sm(), plan.iters);
    if (cublas_one_row_ms)
        std::printf("cuBLAS at M=1 (same N, K): %.4f ms beside cuBLAS's row; 'x M=1' is each row's time over cuBLAS "
                    "at M=1 timed beside it\n",
                    *cublas_one_row_ms);
    // err/tol: the largest per-element scaled error over the tolerance (tuner/accuracy.h); a
    // result passes under 1, and how far under says how much margin the check leaves.
    // rms/tol: the same for the scaled errors' root mean square, which inputs rounded coarser
    // than fp32 fail at a K where err/tol passes them.
    // cuBLAS ms: cuBLAS's median timed in alternation with the row's kernel, which "% cuBLAS"
    // divides by the kernel's; on cuBLAS's own row, its own.
    std::printf("%-10s %11s %11s %9s %10s %8s %11s %11s %8s %8s %5s  %s\n", "kernel", "median ms", "cuBLAS ms",
                "TFLOPS", "% cuBLAS", "x M=1", "max |err|", "rel err", "err/tol", "rms/tol", "runs", "config");
    Json results = Json::array();
    for (const Row& r : rows) {
        const double tflops = problem.flops() / (r.timing.median_ms * 1e-3) / 1e12;
        const double pct = 100.0 * r.cublas_ms / r.timing.median_ms;
        // A wrong result is no speed-up: its row names no ratio, in the table or the JSON.
        const bool valid = r.accuracy.ok();
        const bool has_vs_one_row = valid && r.cublas_one_row_ms;
        const double vs_one_row = has_vs_one_row ? r.timing.median_ms / *r.cublas_one_row_ms : 0.0;
        char pct_text[16] = "-", vs_one_row_text[16] = "-";
        if (valid) std::snprintf(pct_text, sizeof pct_text, "%.1f%%", pct);
        if (has_vs_one_row) std::snprintf(vs_one_row_text, sizeof vs_one_row_text, "%.2fx", vs_one_row);
        std::printf("%-10s %11.4f %11.4f %9.2f %10s %8s %11.3g %11.3g %8.3f %8.3f %5d  %s%s\n", r.kernel.c_str(),
                    r.timing.median_ms, r.cublas_ms, tflops, pct_text, vs_one_row_text, r.accuracy.max_abs_err,
                    r.accuracy.rel_err_norm,
                    r.accuracy.max_scaled_err / r.accuracy.tolerance,
                    r.accuracy.rms_scaled_err / r.accuracy.rms_tolerance, r.timing.runs, r.config.c_str(),
                    valid ? "" : "  [WRONG RESULT]");
        Json result = Json::object();
        result.set("kernel", r.kernel)
            .set("config", r.config)
            .set("median_ms", r.timing.median_ms)
            .set("min_ms", r.timing.min_ms)
            .set("max_ms", r.timing.max_ms)
            .set("runs", r.timing.runs)
            .set("tflops", tflops)
            .set("cublas_ms", r.cublas_ms)
            .set("max_err", r.accuracy.max_abs_err)
            .set("rel_err_norm", r.accuracy.rel_err_norm)
            .set("max_scaled_err", r.accuracy.max_scaled_err)
            .set("tolerance", r.accuracy.tolerance)
            .set("rms_scaled_err", r.accuracy.rms_scaled_err)
            .set("rms_tolerance", r.accuracy.rms_tolerance)
            .set("valid", valid);
        if (r.cublas_one_row_ms) result.set("cublas_m1_ms", *r.cublas_one_row_ms);
        if (valid) result.set("pct_cublas", pct);
        if (has_vs_one_row) result.set("vs_cublas_m1", vs_one_row);
        results.push(result);
    }
    Json entry = Json::object();
    entry.set("gpu", device.name).set("sm", device.sm());
    if (shape.square())
        entry.set("size", shape.n);
    else
        entry.set("size", shape.label());
    entry.set("m", shape.m).set("n", shape.n).set("k", shape.k).set("trans", layout.transposes());
    // The plan as asked for, so that a result file says how it was made: "iters" is --iters,
    // and each result's "runs" what the budget let run.
    entry.set("iters", plan.iters).set("warmup", plan.warmup).set("max_seconds", plan.max_seconds);
    entry.set("lda", args.lda).set("ldb", args.ldb).set("ldc", args.ldc);
    if (cublas_one_row_ms) entry.set("cublas_m1_ms", *cublas_one_row_ms);
    entry.set("results", results);
    Json timelines = Json::array();
    for (const auto& k : timeline_kernels)
        if (skip_reason(*k, call, Arch{device.sm()}).empty())
            timelines.push(timeline_of(*k, shape, problem, flusher, stream, all_ok));
    if (!timeline_kernels.empty()) entry.set("timelines", timelines);
    return entry;
}

// "NAME=V1,V2,..." with the family's parameter names and its defaults: what --config takes.
std::string config_form(const Family& family) {
    std::string names, defaults;
    for (std::size_t i = 0; i < family.params.size(); ++i) {
        names += (i ? "," : "") + family.params[i].name;
        defaults += (i ? "," : "") + std::to_string(family.defaults[i]);
    }
    return family.name + "=" + names + " (defaults " + defaults + ")";
}

// The families --kernels and --config name, each with its parameters in --config's order.
std::string family_list() {
    std::string list;
    for (const Family& family : all_families()) list += "  " + config_form(family) + "\n";
    return list;
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description opts(
        "sgemm-bench: run the five ladder kernels (naive, smem, blocktile, vec4, async) at their\n"
        "default configurations and cuBLAS on this GPU. Each result is checked against cuBLAS\n"
        "(output poisoned with NaN first); times are medians of CUDA-event runs, each after the L2\n"
        "cache is flushed and the SMs' instruction caches are evicted. cuBLAS is timed again in\n"
        "alternation with each kernel, and '% cuBLAS' compares the kernel with that median.\n\n"
        "Usage: sgemm-bench --size 4096 [--iters 50] [--json results.json]\n"
        "       sgemm-bench --sizes 1024,2048,4096,6144,8192\n"
        "       sgemm-bench --m 8 --n 6144 --k 4096\n\n"
        "Families, as --kernels names them, and their parameters in --config's order:\n" +
        family_list() +
        "\nExit status: 0 all results valid, 1 bad arguments (a --device past the GPUs too), 2 no GPU or\n"
        "another error (a shape that could not run: out of memory, a kernel that faulted), 3 a kernel\n"
        "computed a wrong result, which comes before any 2 (a later shape that could not run, a lost\n"
        "standard output or --json file).\n\n"
        "Options");
    const std::string iters_help =
        "timed runs per kernel (median reported), at most " + std::to_string(kMostTimedRuns);
    const std::string warmup_help = "untimed runs before timing, at most " + std::to_string(kMostWarmUpRuns) +
                                    "; they stop early once they have used --max-seconds";
    opts.add_options()("help,h", "show this help")
        ("size", po::value<int>(), "one square problem M = N = K = SIZE")
        ("sizes", po::value<std::string>(), "a sweep of square sizes, comma-separated")
        ("m", po::value<int>(), "rows of A and C (with --n and --k)")
        ("n", po::value<int>(), "columns of B and C")
        ("k", po::value<int>(), "the reduction dimension")
        ("iters", po::value<int>()->default_value(50), iters_help.c_str())
        ("warmup", po::value<int>()->default_value(3), warmup_help.c_str())
        ("max-seconds", po::value<double>()->default_value(10.0),
         "time budget per kernel and shape, warm-up runs and the cuBLAS runs timed alongside the kernel included; "
         "slow kernels get fewer runs (at least 3, or --iters if fewer), judged by the last warm-up run (with "
         "--warmup 0 none is judged: every kernel makes --iters runs)")
        ("kernels", po::value<std::string>(), "comma-separated families to run at their defaults (default: the five "
         "ladder rungs; --kernels naive with --config runs little besides the configs)")
        ("trans", po::value<std::string>()->default_value("NN"),
         "how A and B are stored: NN, NT, TN or TT (A as K x M with T first, B as N x K with T second); "
         "kernels that read another layout are skipped, and a line where none reads it is refused (the families "
         "read NN at their defaults: a --config of warptile, or decode for NT, with TA and TB set)")
        ("lda", po::value<int>(), "leading dimension of A in floats (default: tight, its stored row length); "
         "with --ldb and --ldc, for padded or misaligned operands, as in the shape key's alignment class")
        ("ldb", po::value<int>(), "leading dimension of B in floats (default: tight)")
        ("ldc", po::value<int>(), "leading dimension of C in floats (default: tight, N)")
        ("config", po::value<std::vector<std::string>>(),
         "also run FAMILY=V1,V2,... (parameter values in the family's order); repeatable; a family's defaults "
         "named here run once. A configuration "
         "that cannot run a shape (its layout, its extents, or operands less aligned than it needs, as warptile's "
         "ALIGNED=1 with --lda not a multiple of 4) is skipped with the reason")
        ("timeline", po::bool_switch(),
         "also run each --config kernel of a family that marks per-block timelines (warptile, decode) in a "
         "timeline build, and print where its launch's time goes: when the blocks' main loops end, when the "
         "last block ends, and for split-K how long the blocks that sum a tile take to store their partial, "
         "count in, and sum")
        ("save-cubins", po::value<std::string>(), "write each kernel's cubin into this folder, which must exist (for cuobjdump)")
        ("device", po::value<int>()->default_value(0), "CUDA device ordinal")
        ("json", po::value<std::string>(),
         "also write the results as JSON to this file; where a shape fails (exit 2), those finished before it");

    std::vector<Shape> shapes;
    ShapeKey layout;  // only its transposes
    LeadingDims ld;
    TimingPlan plan;
    std::vector<std::string> wanted;
    std::vector<std::pair<std::string, ParamValues>> extra_configs;
    std::string cubin_dir;
    bool timeline = false;
    int device_ordinal = 0;
    std::string json_path;
    try {
        po::variables_map vm;
        if (!parse_or_print_help(argc, argv, opts, vm)) return finish_standard_output("sgemm-bench", "the help");
        const int ways = static_cast<int>(vm.count("size")) + static_cast<int>(vm.count("sizes")) +
                         (vm.count("m") || vm.count("n") || vm.count("k") ? 1 : 0);
        if (ways != 1) throw po::error("give exactly one of --size, --sizes, or --m/--n/--k");
        if (vm.count("size")) {
            shapes.push_back({vm["size"].as<int>(), vm["size"].as<int>(), vm["size"].as<int>()});
        } else if (vm.count("sizes")) {
            for (int s : parse_positive_int_list(vm["sizes"].as<std::string>(), "sizes")) shapes.push_back({s, s, s});
        } else {
            if (!vm.count("m") || !vm.count("n") || !vm.count("k")) throw po::error("--m, --n and --k go together");
            shapes.push_back({vm["m"].as<int>(), vm["n"].as<int>(), vm["k"].as<int>()});
        }
        for (const Shape& s : shapes) {
            if (s.m < 1 || s.n < 1 || s.k < 1)
                throw po::error("M, N and K must be at least 1, not " + std::to_string(s.m) + " x " + std::to_string(s.n) +
                                " x " + std::to_string(s.k));
        }
        plan.iters = vm["iters"].as<int>();
        plan.warmup = vm["warmup"].as<int>();
        plan.max_seconds = vm["max-seconds"].as<double>();
        if (plan.iters < 1 || plan.iters > kMostTimedRuns)
            throw po::error("--iters must be from 1 to " + std::to_string(kMostTimedRuns) + ", not " +
                            std::to_string(plan.iters));
        if (plan.warmup < 0 || plan.warmup > kMostWarmUpRuns)
            throw po::error("--warmup must be from 0 to " + std::to_string(kMostWarmUpRuns) + ", not " +
                            std::to_string(plan.warmup));
        if (!(plan.max_seconds > 0))  // inf is allowed: every kernel gets its --iters runs
            throw po::error("--max-seconds must be a positive number of seconds (inf: no limit)");
        device_ordinal = vm["device"].as<int>();
        if (device_ordinal < 0) throw po::error("--device must be 0 or more (a CUDA device ordinal)");
        parse_transposes(vm["trans"].as<std::string>(), layout);
        if (vm.count("lda") || vm.count("ldb") || vm.count("ldc")) {
            if (shapes.size() != 1) throw po::error("--lda, --ldb and --ldc need one shape, not --sizes");
            const Shape& s = shapes.front();
            // The stored row lengths (sgemm_common.cuh): A is K x M when transposed, B N x K.
            const int a_cols = layout.trans_a ? s.m : s.k, b_cols = layout.trans_b ? s.k : s.n;
            auto leading = [&](const char* name, int row_length) {
                if (!vm.count(name)) return 0;
                const int v = vm[name].as<int>();
                if (v < row_length)
                    throw po::error(std::string("--") + name + " " + std::to_string(v) +
                                    " is shorter than the row it strides over (" + std::to_string(row_length) +
                                    " floats)");
                return v;
            };
            ld = {leading("lda", a_cols), leading("ldb", b_cols), leading("ldc", s.n)};
        }
        if (vm.count("kernels")) {
            wanted = parse_name_list(lower_case(vm["kernels"].as<std::string>()), "kernels");
            for (const std::string& name : wanted) find_family(name);  // unknown names fail here
        }
        if (vm.count("json")) {
            json_path = vm["json"].as<std::string>();
            check_output_file(json_path, "json");
        }
        if (vm.count("save-cubins")) {
            cubin_dir = vm["save-cubins"].as<std::string>();
            check_output_folder(cubin_dir, "save-cubins");
        }
        if (vm.count("config"))
            for (const std::string& text : vm["config"].as<std::vector<std::string>>()) {
                try {
                    const auto eq = text.find('=');
                    if (eq == std::string::npos) throw Error("expected FAMILY=V1,V2,...");
                    const std::string name = chosen_word(text.substr(0, eq));  // as --kernels reads it
                    // The family first: "=" lacks it, not values, and "naive=" is told its form.
                    const Family& family = find_family(name);
                    if (trim(text.substr(eq + 1)).empty()) throw Error("no values after '=': " + config_form(family));
                    // Its messages start "--config 'TEXT'": the one word that names the option.
                    const ParamValues values =
                        parse_int_list(text.substr(eq + 1), ("config " + single_quoted(text)).c_str(), 0);  // flags may be 0
                    if (values.size() != family.params.size())
                        throw Error(std::to_string(values.size()) + " values for " + std::to_string(family.params.size()) +
                                    " parameters: " + config_form(family));
                    // Refused here, before the GPU is looked for, when no compile target takes
                    // it; the GPU's own arch is checked when the kernel is compiled for it.
                    if (const std::string bad = family.invalid_on_every_target(values); !bad.empty())
                        throw Error(bad);
                    if (std::find(extra_configs.begin(), extra_configs.end(), std::make_pair(name, values)) !=
                        extra_configs.end())
                        throw Error("given twice");
                    extra_configs.emplace_back(name, values);
                } catch (const po::error&) {
                    throw;
                } catch (const std::exception& e) {
                    throw po::error("--config " + single_quoted(text) + ": " + e.what());
                }
            }
        timeline = vm["timeline"].as<bool>();
        if (timeline && std::none_of(extra_configs.begin(), extra_configs.end(),
                                     [](const auto& c) { return find_family(c.first).records_timeline; }))
            throw po::error("--timeline needs a --config of a family that marks timelines (warptile or decode)");
        // Refused before any GPU work, not after the bench has run.
        for (const auto& [name, values] : extra_configs)
            if (const std::string why = timeline ? timeline_refusal(find_family(name), values) : ""; !why.empty())
                throw po::error("--timeline: " + why);
        // A layout that no kernel asked for reads would time cuBLAS alone and exit 0, as if the
        // kernels had run: refused before any GPU work.
        std::vector<std::string> families = wanted;
        if (families.empty())
            for (const Family& rung : ladder_families()) families.push_back(rung.name);
        const auto reads_layout = [&layout](const Family& f, const ParamValues& values) {
            return f.reads_transposes(values, layout.trans_a, layout.trans_b);
        };
        const bool some_kernel_reads_it =
            std::any_of(families.begin(), families.end(),
                        [&](const std::string& name) { return reads_layout(find_family(name), find_family(name).defaults); }) ||
            std::any_of(extra_configs.begin(), extra_configs.end(),
                        [&](const auto& c) { return reads_layout(find_family(c.first), c.second); });
        if (!some_kernel_reads_it) {
            // The families with the flags this layout sets among their parameters.
            const auto has = [](const Family& f, const char* flag) {
                return std::any_of(f.params.begin(), f.params.end(), [flag](const auto& p) { return p.name == flag; });
            };
            std::string readers;
            for (const Family& f : all_families())
                if ((!layout.trans_a || has(f, "TA")) && (!layout.trans_b || has(f, "TB")))
                    readers += (readers.empty() ? "" : " or ") + f.name;
            throw po::error("--trans " + layout.transposes() + ": no kernel asked for reads this layout, so only cuBLAS "
                            "would run (the families read NN at their defaults; a --config of " + readers +
                            " with " + (layout.trans_a && layout.trans_b ? "TA and TB" : layout.trans_a ? "TA" : "TB") +
                            " set reads it)");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgemm-bench: %s\nTry 'sgemm-bench --help'.\n", usage_error_text(e).c_str());
        return 1;
    }

    try {
        const DeviceInfo device = use_device(device_ordinal);
        const Arch arch = compile_target_of(device);
        std::vector<std::unique_ptr<LoadedKernel>> kernels, timeline_kernels;
        // `from_config`: named by --config, so also built with timeline marks under --timeline.
        auto add_kernel = [&](const Family& family, const ParamValues& values, bool from_config) {
            const CompiledKernel compiled = compile_kernel(family, values, arch);
            if (timeline && from_config && family.records_timeline)
                timeline_kernels.push_back(
                    std::make_unique<LoadedKernel>(family, compile_kernel(family, values, arch, KernelBuild::timeline)));
            std::fprintf(stderr, "compiled %-40s %4.0f ms  %3d registers  %5d B smem  %d B spilled\n",
                         family.describe(values).c_str(), compiled.compile_ms, compiled.ptxas.registers,
                         compiled.ptxas.shared_bytes,
                         compiled.ptxas.spill_store_bytes + compiled.ptxas.spill_load_bytes);
            if (!cubin_dir.empty()) {
                std::string file = cubin_dir + "/" + family.name;
                for (int v : values) file += "_" + std::to_string(v);
                write_output_file(file + ".cubin", std::string(compiled.cubin.begin(), compiled.cubin.end()));
                write_output_file(file + ".log", compiled.log);
            }
            kernels.push_back(std::make_unique<LoadedKernel>(family, compiled));
        };
        // By default the five ladder rungs; --kernels may name any family.
        if (wanted.empty())
            for (const Family& rung : ladder_families()) wanted.push_back(rung.name);
        for (const Family& family : all_families()) {
            if (std::find(wanted.begin(), wanted.end(), family.name) == wanted.end()) continue;
            if (arch.sm < family.min_sm) {
                std::fprintf(stderr, "skipping %s: needs sm_%d, this GPU is %s\n", family.name.c_str(),
                             family.min_sm, arch.name().c_str());
                continue;
            }
            // A --config of the defaults runs here, in the family's place, as that --config kernel
            // (which a timeline also follows), and not again below.
            const bool named_by_config = std::find(extra_configs.begin(), extra_configs.end(),
                                                   std::make_pair(family.name, family.defaults)) != extra_configs.end();
            add_kernel(family, family.defaults, named_by_config);
        }
        for (const auto& [name, values] : extra_configs) {
            const bool ran_above = std::any_of(kernels.begin(), kernels.end(), [&](const auto& k) {
                return k->family().name == name && k->values() == values;
            });
            if (!ran_above) add_kernel(find_family(name), values, true);
        }
        CublasHandle cublas;
        Stream stream;
        CacheFlusher flusher(device);
        bool all_ok = true;
        std::vector<Json> entries;
        // A shape that fails (out of device memory at a sweep's largest size, a kernel that
        // faults) ends the run, but the shapes finished before it still go to --json: a sweep
        // of many minutes is not lost to its last size.
        std::string failure;
        for (const Shape& shape : shapes) {
            try {
                entries.push_back(bench_shape(shape, layout, ld, kernels, timeline_kernels, cublas, plan, flusher,
                                              stream, device, all_ok));
                // Each shape's table goes out when it is done. A failed write is said at the end,
                // and --json still gets every shape.
                send_standard_output();
            } catch (const std::exception& e) {
                failure = "M=" + std::to_string(shape.m) + " N=" + std::to_string(shape.n) + " K=" +
                          std::to_string(shape.k) + ": " + e.what();
                break;
            }
        }
        const int written = finish_standard_output_after_work("sgemm-bench", "standard output");
        // Said before the JSON is written, whose own failure would otherwise be all that is said.
        if (!failure.empty()) {
            const std::string kept = json_path.empty() ? ""
                                     : entries.empty()
                                         ? " (no shape finished: " + json_path + " is not written)"
                                         : " (the " + std::to_string(entries.size()) + " shapes before it go to " +
                                               json_path + ")";
            std::fprintf(stderr, "sgemm-bench: %s%s\n", printable_lines(failure).c_str(), printable(kept).c_str());
        }
        int json_written = 0;
        if (!json_path.empty() && !entries.empty()) {
            // One shape: one object. A sweep: an array with one object per size it finished.
            Json sweep = Json::array();
            for (const Json& e : entries) sweep.push(e);
            json_written = write_output_file_after_work("sgemm-bench", json_path,
                                                        (shapes.size() == 1 ? entries.front() : sweep).dump() + "\n");
        }
        // A wrong result first, before a later shape's failure (a sweep's size past the GPU's
        // memory) or output that did not arrive: a check of the status for 3 must not miss it.
        if (!all_ok) return 3;
        if (!failure.empty()) return 2;
        return written != 0 ? written : json_written;
    } catch (const NoDeviceError& e) {
        std::fprintf(stderr, "sgemm-bench: %s\n", printable_lines(e.what()).c_str());
        return 2;
    } catch (const NoSuchDeviceError& e) {
        std::fprintf(stderr, "sgemm-bench: --device: %s\n", printable_lines(e.what()).c_str());
        return 1;
    } catch (const InvalidConfigError& e) {
        std::fprintf(stderr, "sgemm-bench: %s\n", printable_lines(e.what()).c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgemm-bench: %s\n", printable_lines(e.what()).c_str());
        return 2;
    }
}
