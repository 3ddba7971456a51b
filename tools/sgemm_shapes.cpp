// sgemm-shapes: a model's decode GEMMs as the tuner's shapes CSV, so that the tuner can be
// pointed at a model rather than at M, N and K.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "src/util/error.h"
#include "src/util/text.h"
#include "tools/cli_output.h"
#include "tools/cli_parse.h"
#include "tools/decode_cli.h"
#include "tuner/decode/decode_shapes.h"
#include "tuner/longest_tunable_row.h"

namespace po = boost::program_options;
using namespace sgemm;

namespace {
// A config may hold dimensions up to 2^31 - 1, past the rows the tuner can check: its shapes
// file would name such a row only when a tune reads it, so none is written. Each projection is
// named once, whatever the batches (the rows' lengths are N and K, whatever M).
void refuse_rows_too_long_to_tune(const std::vector<DecodeGemm>& gemms) {
    std::vector<std::string> too_long;
    for (const DecodeGemm& g : gemms) {
        const long longest_row = std::max(g.n, g.k);  // A's rows are K long, B's N or K, C's N
        if (longest_row <= kLongestCheckedRow) continue;
        const std::string named = g.name + " (N=" + std::to_string(g.n) + ", K=" + std::to_string(g.k) + ") has rows of " +
                                  std::to_string(longest_row) + " floats";
        if (std::find(too_long.begin(), too_long.end(), named) == too_long.end()) too_long.push_back(named);
    }
    if (too_long.empty()) return;
    // One line: the message is printed with its control characters escaped.
    std::string text = "no CSV is written, as the tuner refuses rows this long: ";
    for (std::size_t i = 0; i < too_long.size(); ++i) text += (i ? ", " : "") + too_long[i];
    throw Error(text + "; " + why_rows_are_limited());
}
}  // namespace

int main(int argc, char** argv) {
    treat_a_closed_pipe_as_a_write_error();
    po::options_description opts(
        "sgemm-shapes: the GEMMs of one decode step of a model, as the tuner's shapes CSV.\n\n"
        "Each row is a row-major C[M x N] = A[M x K] * B[K x N] with M = batch (one new token per\n"
        "sequence) and B the weights; `weight` counts the calls per token step (a per-layer GEMM\n"
        "runs once per layer), `name` says which projections it is: qkv, o, gate_up (up without\n"
        "a gate), down, lm_head. Projections of one shape share a row (\"k/v\").\n"
        "By default the rows are NN: B is stored K x N, in x out. Hugging Face keeps a linear\n"
        "layer's weight out x in, which read as it is makes an NT GEMM (transB = T): say\n"
        "--weights out-in for such rows. GPT-2's layers are the exception: Hugging Face keeps\n"
        "them in x out (Conv1D), so with out-in they stay NN and only its LM head is NT.\n"
        "The decode family and warptile read both layouts.\n\n"
        "Usage: sgemm-shapes llama-3-8b --batch 1,8,32 > decode.csv\n"
        "       sgemm-shapes --config path/to/config.json --batch 1 --no-fuse -o shapes.csv\n"
        "       sgemm-shapes mistral-7b --weights out-in > hf_layout.csv\n\n"
        "Exit status: 0 the CSV is written; 1 bad arguments, a bad config (or one of rows longer than\n"
        "the tuner takes), or an -o path that cannot be written (checked before any work); 2 the CSV\n"
        "failed as it was written (a file -o names is written whole or left as it was).\n\n"
        "Options",
        100);
    po::positional_options_description positional;
    opts.add_options()("help,h", "show this help");
    add_model_options(opts, positional, "1,8,32");
    opts.add_options()
        ("no-fuse", "separate Q, K, V and gate, up projections instead of the fused QKV and gate_up")
        ("weights", po::value<std::string>()->default_value("in-out"),
         "how the engine stores each weight: in-out (K x N, NN rows) or out-in (N x K, as Hugging Face "
         "checkpoints do: NT rows; GPT-2's Conv1D layers stay NN)")
        ("output,o", po::value<std::string>(), "write the CSV to this file instead of standard output");

    std::vector<DecodeGemm> gemms;
    ModelConfig model;
    WeightLayout layout = WeightLayout::in_out;
    std::string output;
    try {
        const po::variables_map vm = parse_command_line(argc, argv, opts, positional);
        if (vm.count("help")) {
            errno = 0;
            std::cout << opts << "\n";
            return finish_standard_output("sgemm-shapes", "the help");
        }
        const std::string weights = chosen_word(vm["weights"].as<std::string>());
        if (weights != "in-out" && weights != "out-in")
            throw po::error("--weights is in-out or out-in, not " + single_quoted(vm["weights"].as<std::string>()));
        layout = weights == "out-in" ? WeightLayout::out_in : WeightLayout::in_out;
        const std::vector<long> batches = batches_from_options(vm);
        // Checked before the config is read: a user typing it at a terminal types it once.
        if (vm.count("output")) {
            output = vm["output"].as<std::string>();
            if (output.empty()) throw std::runtime_error("--output is empty (leave it out to write to standard output)");
            check_output_file(output, "output");
            if (vm.count("config"))
                check_output_is_not_input(output, "output", vm["config"].as<std::string>(), "the model's config");
        }
        model = model_from_options(vm, "sgemm-shapes");
        for (long batch : batches) {
            const std::vector<DecodeGemm> step = decode_gemms(model, batch, vm.count("no-fuse") == 0);
            gemms.insert(gemms.end(), step.begin(), step.end());
        }
        refuse_rows_too_long_to_tune(gemms);
    } catch (const std::exception& e) {
        // Messages quote the user's text (paths, names): control characters are escaped.
        std::fprintf(stderr, "sgemm-shapes: %s\nTry 'sgemm-shapes --help'.\n", usage_error_text(e).c_str());
        return 1;
    }

    const std::vector<std::string> comments = {
        "decode GEMMs of " + model.name + (model.name == model.source ? "" : " (" + model.source + ")") +
            ", one token step: C[M x N] = A[M x K] * " +
            (layout == WeightLayout::out_in
                 ? std::string("B^T, B[N x K] the weight stored out x in") +
                       (model.conv1d_layers ? " (but for the layers' Conv1D weights, B[K x N]: NN rows)" : "")
                 : std::string("B[K x N]")) +
            ", M = batch, weight = calls per step",
        "made by: " + command_line("sgemm-shapes", argc, argv),
    };
    errno = 0;  // from here on, the reason a write fails
    if (output.empty()) {
        write_shapes_csv(std::cout, gemms, layout, comments);
        return finish_standard_output("sgemm-shapes", "the CSV to standard output");
    }
    std::ostringstream csv;
    write_shapes_csv(csv, gemms, layout, comments);
    try {
        write_output_file(output, csv.str());
    } catch (const OutputError& e) {
        std::fprintf(stderr, "sgemm-shapes: %s\n", printable(e.what()).c_str());
        return 2;
    }
    return 0;
}
