// The decode roofline: what one token step of a model must compute and move, and so the
// fastest the GPU allows. A kernel cannot beat max(FLOPs / peak, bytes / bandwidth).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tuner/decode/gpu_spec.h"
#include "tuner/decode/model_config.h"
#include "tuner/decode/precision.h"

namespace sgemm {

// What one kernel call must do: its FLOPs and the fewest bytes it must move to or from DRAM.
struct Traffic {
    double flops = 0;
    double bytes = 0;
    double intensity() const { return bytes > 0 ? flops / bytes : 0; }  // FLOP per byte
};

// Row-major C[M x N] = A[M x K] * B[K x N] with B the weights: 2*M*N*K FLOPs; B and A read
// once, C written once.
Traffic gemm_traffic(long m, long n, long k, double weight_bytes, double activation_bytes);

// The roofline floor: max(FLOPs / peak, bytes / bandwidth), in seconds.
double floor_seconds(const Traffic& traffic, double peak_flops, double bytes_per_s);

struct DecodeSetup {
    ModelConfig model;
    GpuSpec gpu;
    Precision weights = Precision::fp32;
    long context = 0;  // tokens already in each sequence's KV cache
};

// One kind of kernel in the step: a GEMM of decode_gemms(), or one half of attention.
struct RooflineRow {
    std::string name;
    bool attention = false;
    std::string shape;    // "MxNxK" for a GEMM; the batched problem for attention
    long m = 0, n = 0, k = 0;  // GEMMs only
    long weight = 0;      // calls per step
    Traffic per_call;
    double peak_flops = 0;  // the peak this kernel's number format runs at
    double compute_s = 0;   // per call: FLOPs / peak
    double memory_s = 0;    // per call: bytes / bandwidth
    double time_s() const { return compute_s > memory_s ? compute_s : memory_s; }
    bool compute_bound() const { return compute_s >= memory_s; }
};

struct StepRoofline {
    long batch = 0;
    std::vector<RooflineRow> rows;
    // Sums over rows, each row times its weight.
    double flops = 0, bytes = 0;
    double compute_s = 0, memory_s = 0;
    double time_s = 0;  // the sum of every call's floor: kernels run one after another
    double tokens_per_s = 0;
    // What must stay in device memory: the GEMMs' weights and every sequence's KV cache (as
    // long as its layers read: a sliding window keeps only the window). Input embeddings,
    // activations and the runtime's own memory come on top.
    double resident_bytes = 0;
    double intensity() const { return bytes > 0 ? flops / bytes : 0; }
    bool compute_bound() const { return compute_s >= memory_s; }
    // Whether resident_bytes fit in `gpu`'s memory; true where the spec does not say.
    double resident_gib() const { return resident_bytes / 1073741824.0; }
    bool fits(const GpuSpec& gpu) const { return gpu.memory_gib <= 0 || resident_gib() <= gpu.memory_gib; }
};

// The step at `batch` sequences of setup.context tokens each: the GEMMs (QKV and gate/up
// fused) and attention's two products over the KV cache.
StepRoofline decode_step(const DecodeSetup& setup, long batch);

// How the step's times grow with the batch. Weights are read once per step however large the
// batch, but every FLOP and each sequence's activations and KV cache grow with it: compute
// time is c*B and memory time w + m*B. With c > m compute catches up at B = w / (c - m);
// otherwise the step's intensity climbs towards a limit under the ridge, and no batch is
// compute-bound.
struct BatchLimit {
    std::optional<long> batch;  // the smallest batch whose compute time >= memory time
    double compute_per_sequence_s = 0;  // c
    double memory_per_sequence_s = 0;   // m
    double weights_s = 0;               // w
};
BatchLimit compute_bound_batch(const DecodeSetup& setup);

// The model's assumptions, in sentences, for the tools to print.
std::vector<std::string> roofline_assumptions(const DecodeSetup& setup);

// "66.9 TFLOPS", or "1978.9 TOPS" for int8: `gpu`'s peak for math in `precision`, to five
// significant digits (four would print the H100's int8 1978.9 as 1979).
std::string peak_text(const GpuSpec& gpu, Precision precision);

}  // namespace sgemm
