#include "tuner/decode/roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "src/util/error.h"
#include "tuner/decode/decode_shapes.h"

namespace sgemm {

Traffic gemm_traffic(long m, long n, long k, double weight_bytes, double activation_bytes) {
    const double M = m, N = n, K = k;
    return {2 * M * N * K, K * N * weight_bytes + (M * K + M * N) * activation_bytes};
}

double floor_seconds(const Traffic& traffic, double peak_flops, double bytes_per_s) {
    return std::max(traffic.flops / peak_flops, traffic.bytes / bytes_per_s);
}

namespace {

// Layers that read KV caches of one length: the sliding-window layers, and the others.
struct AttentionLayers {
    long layers;
    long length;  // past tokens each reads
    bool sliding;
};

// Each group only when it has layers, the sliding-window one first.
std::vector<AttentionLayers> attention_layers(const DecodeSetup& setup) {
    const ModelConfig& m = setup.model;
    std::vector<AttentionLayers> groups;
    if (m.sliding_window_layers > 0)
        groups.push_back({m.sliding_window_layers, std::min(setup.context, m.sliding_window), true});
    if (m.num_hidden_layers > m.sliding_window_layers)
        groups.push_back({m.num_hidden_layers - m.sliding_window_layers, setup.context, false});
    return groups;
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    return text;
}

RooflineRow make_row(std::string name, std::string shape, long weight, Traffic traffic, double peak_flops,
                     const GpuSpec& gpu) {
    RooflineRow row;
    row.name = std::move(name);
    row.shape = std::move(shape);
    row.weight = weight;
    row.per_call = traffic;
    row.peak_flops = peak_flops;
    row.compute_s = traffic.flops / peak_flops;
    row.memory_s = traffic.bytes / gpu.bytes_per_s();
    return row;
}

// Attention for one new token per sequence, per layer: every query head multiplies its q by
// the K cache (QK^T, 2*d*L FLOPs) and the softmaxed scores by the V cache (PV, 2*L*d FLOPs).
// The g query heads that share a KV head read its cache once, and each sequence has its own
// cache, so the bytes grow with the batch as the FLOPs do.
// With some layers sliding and some not, each group has its own pair of rows; the sliding
// ones are named "..._window".
void add_attention(const DecodeSetup& setup, long batch, std::vector<RooflineRow>& rows) {
    const ModelConfig& model = setup.model;
    const Precision precision = activation_precision(setup.weights);
    const double bytes = bytes_per_element(precision);  // activations and KV cache share it
    double peak = 0;
    try {
        peak = setup.gpu.peak_flops(precision);
    } catch (const Error& e) {
        if (precision == setup.weights) throw;
        throw Error(std::string(e.what()) + ": with " + to_string(setup.weights) + " weights, attention and the KV cache are " +
                    to_string(precision));
    }
    const double B = batch, d = model.head_dim;
    const double q_width = model.num_attention_heads * d;
    const double kv_width = model.num_key_value_heads * d;
    const long group = model.num_attention_heads / model.num_key_value_heads;
    const std::string batched = std::to_string(batch) + " seq x " + std::to_string(model.num_key_value_heads) +
                                " kvh x " + std::to_string(group) + "x";
    const std::string d_text = std::to_string(model.head_dim);
    const std::vector<AttentionLayers> groups = attention_layers(setup);
    for (const AttentionLayers& g : groups) {
        if (g.length == 0) continue;
        const double L = g.length;
        // QK^T reads q and the K cache; PV reads the V cache and writes the output, as many
        // bytes. The scores between them stay on chip (fused attention).
        const Traffic half{2 * B * q_width * L, B * (L * kv_width + q_width) * bytes};
        const std::string suffix = groups.size() > 1 && g.sliding ? "_window" : "";
        const std::string L_text = std::to_string(g.length);
        const auto add = [&](const std::string& name, const std::string& gemm) {
            RooflineRow row = make_row(name + suffix, batched + gemm, g.layers, half, peak, setup.gpu);
            row.attention = true;
            rows.push_back(row);
        };
        add("attn_qk", L_text + "x" + d_text);  // [g x d] * [d x L] per KV head
        add("attn_pv", d_text + "x" + L_text);  // [g x L] * [L x d]
    }
}

}  // namespace

StepRoofline decode_step(const DecodeSetup& setup, long batch) {
    if (setup.context < 0) throw Error("context must not be negative, got " + std::to_string(setup.context));
    StepRoofline step;
    step.batch = batch;
    const double w_bytes = bytes_per_element(setup.weights);
    const double a_bytes = bytes_per_element(activation_precision(setup.weights));
    const double gemm_peak = setup.gpu.peak_flops(setup.weights);
    for (const DecodeGemm& g : decode_gemms(setup.model, batch, /*fuse=*/true)) {
        const std::string shape = std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k);
        RooflineRow row = make_row(g.name, shape, g.weight, gemm_traffic(g.m, g.n, g.k, w_bytes, a_bytes), gemm_peak,
                                   setup.gpu);
        row.m = g.m, row.n = g.n, row.k = g.k;
        step.rows.push_back(row);
        step.resident_bytes += static_cast<double>(g.weight) * g.n * g.k * w_bytes;  // each call its own weights
    }
    add_attention(setup, batch, step.rows);
    const double kv_width = setup.model.num_key_value_heads * setup.model.head_dim;
    for (const AttentionLayers& g : attention_layers(setup))
        step.resident_bytes += 2.0 * g.layers * batch * g.length * kv_width * a_bytes;  // K and V
    for (const RooflineRow& row : step.rows) {
        step.flops += row.weight * row.per_call.flops;
        step.bytes += row.weight * row.per_call.bytes;
        step.compute_s += row.weight * row.compute_s;
        step.memory_s += row.weight * row.memory_s;
        step.time_s += row.weight * row.time_s();
    }
    step.tokens_per_s = batch / step.time_s;
    return step;
}

BatchLimit compute_bound_batch(const DecodeSetup& setup) {
    // c, m and w read off the steps at B = 1 and 2.
    const StepRoofline one = decode_step(setup, 1), two = decode_step(setup, 2);
    BatchLimit limit;
    limit.compute_per_sequence_s = one.compute_s;
    limit.memory_per_sequence_s = two.memory_s - one.memory_s;
    limit.weights_s = one.memory_s - limit.memory_per_sequence_s;
    const double gain = limit.compute_per_sequence_s - limit.memory_per_sequence_s;
    if (gain <= 0) return limit;
    const double exact = limit.weights_s / gain;
    if (exact > static_cast<double>(std::numeric_limits<long>::max() / 2)) return limit;
    // Rounding may put the estimate off, by far when c and m nearly cancel; settle it on the
    // steps themselves. Compute and memory both grow linearly with the batch, compute faster,
    // so the steps are compute-bound from one batch on: bisect for it.
    long low = 0;  // below the first compute-bound batch
    long high = std::max(1L, static_cast<long>(std::ceil(exact)));
    while (!decode_step(setup, high).compute_bound()) {
        if (high > std::numeric_limits<long>::max() / 4) return limit;
        low = high;
        high *= 2;
    }
    while (high - low > 1) {
        const long middle = low + (high - low) / 2;
        (decode_step(setup, middle).compute_bound() ? high : low) = middle;
    }
    limit.batch = high;
    return limit;
}

std::string peak_text(const GpuSpec& gpu, Precision precision) {
    char text[48];
    std::snprintf(text, sizeof text, "%.5g %s", gpu.peak_flops(precision) / 1e12,
                  precision == Precision::int8 ? "TOPS" : "TFLOPS");
    return text;
}

std::vector<std::string> roofline_assumptions(const DecodeSetup& setup) {
    const Precision act = activation_precision(setup.weights);
    const long group = setup.model.num_attention_heads / setup.model.num_key_value_heads;
    std::vector<std::string> out = {
        "weights in " + to_string(setup.weights) + " (" + number(bytes_per_element(setup.weights)) +
            " B each), read from DRAM once per step whatever the batch",
        "activations and the KV cache in " + to_string(act) + "; each GEMM reads its input and writes its output once",
        "GEMMs at the " + to_string(setup.weights) + " peak (" + peak_text(setup.gpu, setup.weights) +
            "), attention at the " + to_string(act) + " peak (" + peak_text(setup.gpu, act) + "), memory at " +
            number(setup.gpu.bandwidth_tbs) + " TB/s",
        "attention is fused: scores stay on chip; each sequence reads its own K and V cache once per layer" +
            (group == 1 ? std::string(", each KV head for one query head")
                        : ", shared by the " + std::to_string(group) + " query heads of each KV head"),
        std::string(setup.model.gated_mlp ? "QKV and gate/up run fused" : "QKV runs fused") +
            "; norms, rotary embedding, sampling and the new token's KV write are left out",
        "each kernel takes the larger of its compute and memory times and kernels do not overlap: the step is their sum",
        "compute-bound means the step's compute time is at least its memory time",
    };
    for (const AttentionLayers& g : attention_layers(setup)) {
        const std::string share = std::to_string(g.layers) + " of " + std::to_string(setup.model.num_hidden_layers) + " layers ";
        if (g.sliding)
            out.push_back(share + "attend through a sliding window of " + std::to_string(setup.model.sliding_window) +
                          " tokens: each reads " + std::to_string(g.length) + " past tokens");
        else if (g.length == 0)
            out.push_back(share + "read no past tokens (context 0)");
        else
            out.push_back(share + "read all " + std::to_string(g.length) + " past tokens");
    }
    if (setup.model.max_positions > 0 && setup.context + 1 > setup.model.max_positions)
        out.push_back("context " + std::to_string(setup.context) + " and the new token pass the " +
                      std::to_string(setup.model.max_positions) +
                      " positions the model was made for (its max_position_embeddings, or n_positions): the step "
                      "is counted as if it could run there");
    if (setup.weights == Precision::int8)
        out.push_back("int8 weights: W8A8 GEMMs at the int8 peak, their fp16 input quantised on the fly");
    if (setup.gpu.memory_gib > 0)
        out.push_back("a step fits when the GEMMs' weights and every sequence's KV cache fit in the GPU's " +
                      number(setup.gpu.memory_gib) +
                      " GiB; an input embedding not tied to the LM head, activations and the runtime's own memory "
                      "come on top, so a step that only just fits may not");
    else
        out.push_back("the GPU's memory is not given (memory_gib): whether a step fits is not checked");
    return out;
}

}  // namespace sgemm
