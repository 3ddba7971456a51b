// sgemm-roofline: what one decode step of a model needs from a GPU, and so the fastest the
// GPU allows: FLOPs and bytes per kernel, their roofline times, tokens per second, and the
// batch from which decode would be compute-bound. No GPU needed: it is arithmetic on the
// model's sizes and the GPU's datasheet (or measured) ceilings.
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <optional>

#include "src/util/json.h"
#include "src/util/text.h"
#include "tools/cli_input.h"
#include "tools/cli_output.h"
#include "tools/cli_parse.h"
#include "tools/cli_table.h"
#include "tools/decode_cli.h"
#include "tuner/decode/roofline.h"

namespace po = boost::program_options;
using namespace sgemm;

namespace {

// A GPU's optional figure as JSON: null where it is not known (0).
Json given(double figure) { return figure > 0 ? Json(figure) : Json(); }

const char* bound(bool compute_bound) { return compute_bound ? "compute" : "memory"; }

Json row_json(const RooflineRow& r) {
    Json j = Json::object();
    j.set("name", r.name).set("kind", r.attention ? "attention" : "gemm").set("shape", r.shape);
    if (!r.attention) j.set("m", r.m).set("n", r.n).set("k", r.k);
    return j.set("calls", r.weight)
        .set("flops", r.per_call.flops)
        .set("bytes", r.per_call.bytes)
        .set("intensity", r.per_call.intensity())
        .set("peak_flops", r.peak_flops)
        .set("compute_s", r.compute_s)
        .set("memory_s", r.memory_s)
        .set("time_s", r.time_s())
        .set("bound", bound(r.compute_bound()));
}

Json step_json(const StepRoofline& s, const GpuSpec& gpu) {
    Json rows = Json::array();
    for (const RooflineRow& r : s.rows) rows.push(row_json(r));
    return Json::object()
        .set("batch", s.batch)
        .set("resident_bytes", s.resident_bytes)
        .set("fits", gpu.memory_gib > 0 ? Json(s.fits(gpu)) : Json())
        .set("flops", s.flops)
        .set("bytes", s.bytes)
        .set("intensity", s.intensity())
        .set("compute_s", s.compute_s)
        .set("memory_s", s.memory_s)
        .set("time_s", s.time_s)
        .set("tokens_per_s", s.tokens_per_s)
        .set("bound", bound(s.compute_bound()))
        .set("kernels", rows);
}

void print_step(const StepRoofline& s, const GpuSpec& gpu) {
    // One decimal, as the ridge; below 1 token/s (a context of billions) in significant
    // digits, where %.1f printed 0.0; so the step's time under a microsecond (a tiny model),
    // where %.3f printed 0.000 ms.
    std::printf("\nbatch %ld: %s ms per step, ", s.batch, fixed(s.time_s * 1e3, 3).c_str());
    std::printf(s.tokens_per_s >= 1 ? "%.1f tokens/s, %s-bound (%.2f FLOP/B over the step)\n"
                                    : "%.3g tokens/s, %s-bound (%.2f FLOP/B over the step)\n",
                s.tokens_per_s, bound(s.compute_bound()), s.intensity());
    if (!s.fits(gpu))
        std::printf("  does not fit: the GEMMs' weights and the KV caches take %.1f GiB, more than the %s's %.4g GiB; "
                    "the step is counted as if it could run\n",
                    s.resident_gib(), printable(gpu.name).c_str(), gpu.memory_gib);
    Table table({"kernel", "shape (MxNxK)", "calls", "GFLOP/step", "MB/step", "FLOP/B", "bound", "us/step"});
    for (const RooflineRow& r : s.rows)
        table.add({r.name, r.shape, std::to_string(r.weight), fixed(r.weight * r.per_call.flops / 1e9, 3),
                   fixed(r.weight * r.per_call.bytes / 1e6, 1), fixed(r.per_call.intensity(), 2), bound(r.compute_bound()),
                   fixed(r.weight * r.time_s() * 1e6, 1)});
    table.add({"total", "", "-", fixed(s.flops / 1e9, 3), fixed(s.bytes / 1e6, 1), fixed(s.intensity(), 2),
               bound(s.compute_bound()), fixed(s.time_s * 1e6, 1)});
    table.print("  ");
}

// The first compute-bound batch, and that batch's step: whether it fits is part of the answer.
struct Limit {
    BatchLimit batch;
    std::optional<StepRoofline> step;  // at batch.batch, when there is one
};

Limit limit_for(const DecodeSetup& setup) {
    Limit limit{compute_bound_batch(setup), std::nullopt};
    if (limit.batch.batch) limit.step = decode_step(setup, *limit.batch.batch);
    return limit;
}

std::string limit_text(const Limit& l, const GpuSpec& gpu) {
    const BatchLimit& limit = l.batch;
    // Numbers are formatted into `text`; the GPU's name, which may be of any length, is not.
    char text[384];
    if (limit.batch && !l.step->fits(gpu)) {
        std::snprintf(text, sizeof text, "from batch %ld, which does not fit: the GEMMs' weights and the KV caches take %.1f GiB",
                      *limit.batch, l.step->resident_gib());
        char memory[48];
        std::snprintf(memory, sizeof memory, "'s %.4g GiB", gpu.memory_gib);
        return std::string(text) + ", more than the " + printable(gpu.name) + memory;
    }
    if (limit.batch)
        std::snprintf(text, sizeof text, "from batch %ld", *limit.batch);
    else
        // Significant digits: a small model on a fast GPU adds thousandths of a microsecond,
        // which %.2f printed as "0.00 us ... but 0.00 us".
        std::snprintf(text, sizeof text,
                      "no batch size; each sequence adds %.3g us of compute but %.3g us of memory traffic per step",
                      limit.compute_per_sequence_s * 1e6, limit.memory_per_sequence_s * 1e6);
    return text;
}

Json limit_json(const Limit& l, const GpuSpec& gpu) {
    const BatchLimit& limit = l.batch;
    return Json::object()
        .set("batch", limit.batch ? Json(*limit.batch) : Json())
        .set("resident_bytes", l.step ? Json(l.step->resident_bytes) : Json())
        .set("fits", l.step && gpu.memory_gib > 0 ? Json(l.step->fits(gpu)) : Json())
        .set("compute_per_sequence_s", limit.compute_per_sequence_s)
        .set("memory_per_sequence_s", limit.memory_per_sequence_s)
        .set("weights_s", limit.weights_s);
}

// Everything the tool says, computed before anything is printed so that a GPU spec without a
// peak for the chosen format fails cleanly.
struct Report {
    DecodeSetup setup;
    std::vector<StepRoofline> steps;
    std::vector<std::string> assumptions;
    Limit limit, limit_without_kv_cache;

    double ridge() const { return setup.gpu.peak_flops(setup.weights) / setup.gpu.bytes_per_s(); }
};

Report make_report(const DecodeSetup& setup, const std::vector<long>& batches) {
    Report report;
    report.setup = setup;
    for (long batch : batches) report.steps.push_back(decode_step(setup, batch));
    report.assumptions = roofline_assumptions(setup);
    report.limit = limit_for(setup);
    DecodeSetup no_kv_cache = setup;
    no_kv_cache.context = 0;
    report.limit_without_kv_cache = limit_for(no_kv_cache);
    return report;
}

Json report_json(const Report& report) {
    const ModelConfig& m = report.setup.model;
    const GpuSpec& g = report.setup.gpu;
    Json steps = Json::array(), notes = Json::array();
    for (const StepRoofline& step : report.steps) steps.push(step_json(step, report.setup.gpu));
    for (const std::string& a : report.assumptions) notes.push(a);
    return Json::object()
        .set("model", Json::object()
                          .set("name", m.name)
                          .set("source", m.source)
                          .set("hidden_size", m.hidden_size)
                          .set("intermediate_size", m.intermediate_size)
                          .set("vocab_size", m.vocab_size)
                          .set("num_attention_heads", m.num_attention_heads)
                          .set("num_key_value_heads", m.num_key_value_heads)
                          .set("head_dim", m.head_dim)
                          .set("num_hidden_layers", m.num_hidden_layers)
                          .set("gated_mlp", m.gated_mlp)
                          .set("sliding_window", m.sliding_window)
                          .set("sliding_window_layers", m.sliding_window_layers)
                          .set("max_position_embeddings", m.max_positions > 0 ? Json(m.max_positions) : Json()))
        // A figure the GPU does not have is null, as a GPU file leaves it out: the object reads
        // back as a --gpu file.
        .set("gpu", Json::object()
                        .set("name", g.name)
                        .set("source", g.source)
                        .set("fp32_tflops", g.fp32_tflops)
                        .set("fp16_tflops", given(g.fp16_tflops))
                        .set("bf16_tflops", given(g.bf16_tflops))
                        .set("int8_tops", given(g.int8_tops))
                        .set("bandwidth_tbs", g.bandwidth_tbs)
                        .set("memory_gib", given(g.memory_gib)))
        .set("dtype", to_string(report.setup.weights))
        .set("context", report.setup.context)
        .set("ridge", report.ridge())
        .set("assumptions", notes)
        .set("steps", steps)
        .set("compute_bound", limit_json(report.limit, g))
        .set("compute_bound_without_kv_cache", limit_json(report.limit_without_kv_cache, g));
}

void print_report(const Report& report) {
    const DecodeSetup& setup = report.setup;
    // One decimal, as FLOP/B are read; a ridge below 1 (a slow GPU's peak, a fast memory) in
    // significant digits, where %.1f printed 0.0.
    char ridge[32];
    std::snprintf(ridge, sizeof ridge, report.ridge() >= 1 ? "%.1f" : "%.3g", report.ridge());
    std::printf("%s on %s: %s weights, context %ld; ridge %s FLOP/B (%s / %.4g TB/s)\n",
                printable(setup.model.name).c_str(), printable(setup.gpu.name).c_str(), to_string(setup.weights).c_str(),
                setup.context, ridge, peak_text(setup.gpu, setup.weights).c_str(), setup.gpu.bandwidth_tbs);
    // The built-in GPUs' figures are of different kinds (the H200's bandwidth is measured, the
    // others' are datasheet values): say which these are.
    if (!setup.gpu.source.empty()) std::printf("GPU figures: %s\n", printable(setup.gpu.source).c_str());
    std::printf("Assumptions:\n");
    for (const std::string& a : report.assumptions) std::printf("  - %s\n", a.c_str());
    for (const StepRoofline& step : report.steps) print_step(step, setup.gpu);
    std::printf("\nCompute-bound at context %ld: %s.\n", setup.context, limit_text(report.limit, setup.gpu).c_str());
    if (setup.context > 0)
        std::printf("Compute-bound without the KV cache (context 0): %s.\n",
                    limit_text(report.limit_without_kv_cache, setup.gpu).c_str());
}

}  // namespace

int main(int argc, char** argv) {
    treat_a_closed_pipe_as_a_write_error();
    po::options_description opts(
        "sgemm-roofline: the decode roofline of a model on a GPU. Per token step it counts the\n"
        "FLOPs and the bytes of every GEMM (weights, activations) and of attention's reads of\n"
        "the KV cache at the given context, and gives each kernel the larger of its compute and\n"
        "memory times: the step's time, tokens per second, and the batch from which decode is\n"
        "compute-bound at this context (or that none is). A step whose weights and KV caches do\n"
        "not fit in the GPU's memory is flagged. The assumptions are printed with the results.\n"
        "No GPU is needed.\n\n"
        "Usage: sgemm-roofline llama-3-8b --gpu 'H100 SXM' --dtype fp16 --context 4096 --batch 1,8,32,256\n"
        "       sgemm-roofline --config config.json --gpu my_gpu.json --json\n\n"
        "A GPU file is JSON: {\"name\": ..., \"fp32_tflops\": ..., \"bandwidth_tbs\": ...} and, for\n"
        "--dtype other than fp32, \"fp16_tflops\", \"bf16_tflops\" or \"int8_tops\" (int8 needs\n"
        "\"fp16_tflops\" too: attention and the KV cache are fp16 then); \"memory_gib\" to check\n"
        "that each step fits; \"source\", where the figures come from, which --json writes beside\n"
        "them, so that its gpu object reads back with it. Other fields are refused, so that a\n"
        "misspelt one is never ignored.\n\n"
        "Exit status: 0 the report is written; 1 bad arguments, a bad config or GPU file; 2 standard\n"
        "output could not be written.\n\n"
        "Options",
        100);
    po::positional_options_description positional;
    std::string gpu_names;
    for (const GpuSpec& g : builtin_gpus()) gpu_names += (gpu_names.empty() ? "" : ", ") + g.name;
    opts.add_options()("help,h", "show this help");
    add_model_options(opts, positional, "1,8,32");
    opts.add_options()
        ("gpu", po::value<std::string>()->default_value("H200"),
         ("a built-in GPU (" + gpu_names + ") or a JSON file: a name ending in .json, or any path with a / "
          "(<(...) and /dev/stdin too; - reads standard input)").c_str())
        ("context", po::value<int>()->default_value(4096), "tokens already in each sequence's KV cache")
        ("dtype", po::value<std::string>()->default_value("fp32"), "weight format: fp32, fp16, bf16 or int8")
        ("json", "print JSON instead of tables. Each step's flops, bytes and times (s) are per step; "
                 "each kernel's are per call, and its calls per step are 'calls' (the tables show "
                 "kernels per step)");

    Report report;
    bool json = false;
    try {
        const po::variables_map vm = parse_command_line(argc, argv, opts, positional);
        if (vm.count("help")) {
            errno = 0;
            std::cout << opts << "\n";
            return finish_standard_output("sgemm-roofline", "the help");
        }
        // By any name: /dev/stdin, or the file stdin is redirected from.
        if (vm.count("config") && reads_standard_input(vm["config"].as<std::string>()) &&
            reads_standard_input(vm["gpu"].as<std::string>()))
            throw po::error("--config " + vm["config"].as<std::string>() + " and --gpu " + vm["gpu"].as<std::string>() +
                            " would both read standard input: give one of them as a file");
        DecodeSetup setup;
        setup.weights = parse_precision(vm["dtype"].as<std::string>());
        setup.context = vm["context"].as<int>();
        if (setup.context < 0) throw po::error("--context must not be negative");
        const std::vector<long> batches = batches_from_options(vm);
        json = vm.count("json") > 0;
        // What does not read standard input is checked before a user is asked to type into it.
        const std::string gpu = vm["gpu"].as<std::string>();
        if (gpu != "-") setup.gpu = gpu_from_name_or_file(gpu);
        setup.model = model_from_options(vm, "sgemm-roofline");
        if (gpu == "-") {
            say_when_reading_a_terminal("sgemm-roofline", "the GPU's spec");
            setup.gpu = gpu_from_name_or_file(gpu);
        }
        report = make_report(setup, batches);
    } catch (const std::exception& e) {
        // Messages quote the user's text (paths, names): control characters are escaped.
        std::fprintf(stderr, "sgemm-roofline: %s\nTry 'sgemm-roofline --help'.\n", usage_error_text(e).c_str());
        return 1;
    }
    errno = 0;  // from here on, the reason a write fails
    if (json)
        std::cout << report_json(report).dump() << "\n";
    else
        print_report(report);
    return finish_standard_output("sgemm-roofline", "standard output");
}
