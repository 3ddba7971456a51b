// One decode step of a Llama-3-8B-like layer stack through libsgemm_dispatch, checked and
// timed against cuBLAS alone. An application of the installed package: it includes
// <sgemm/dispatch.hpp> and links -lsgemm_dispatch through pkg-config (see the Makefile).
//
// A step is 32 layers of four GEMMs, then the LM head; each is C[M x N] = X[M x K] * W[K x N],
// row-major, M = the batch (with --weights out-in, X * W^T with W stored N x K, as Hugging
// Face keeps a linear layer: an NT GEMM):
//     qkv 6144 x 4096, o 4096 x 4096, gate_up 28672 x 4096, down 4096 x 14336 (N x K),
//     lm_head 128256 x 4096
// at batch 1, 8 and 32. The weights are random, and one set per distinct shape serves all
// 32 layers, so GPU memory stays near 3 GB: this measures the GEMMs of a step, not a model.
//
// For every batch: each of the step's 129 GEMMs is checked against cuBLAS, its output first
// filled with NaN (the layers share buffers: a call that wrote nothing would otherwise show
// the last one's right result); then the step is
// timed with CUDA events, with dispatch and with cuBLAS alone, alternating, and the medians
// are printed with each GEMM's own time and what dispatch chose for it.
//
// usage: dispatch_decode [--db PATH] [--device N] [--steps N] [--weights in-out|out-in]
//                        [--record-misses] [--deterministic] [--help]
//   --db PATH        the tuning database (default: $SGEMM_DB, $XDG_DATA_HOME/sgemm/tuning.db
//                    or ~/.local/share/sgemm/tuning.db)
//   --device N       the CUDA device ordinal (default 0): the handle's, and so the one the
//                    weights, the stream and cuBLAS are made on (create makes it current)
//   --steps N        timed steps per batch and way (default 10, at most 10000)
//   --weights LAYOUT in-out: W stored K x N (default); out-in: N x K, the NT GEMM (tune it
//                    with sgemm-shapes --weights out-in rows)
//   --record-misses  write the shapes without an exact winner to the database, for
//                    sgemm-tune --from-misses
//   --deterministic  the dispatch option: winners tuned with --allow-atomics, whose results
//                    vary in the last bits, give way to the fastest kernels without atomics
// Exit status: 0 all checks passed, 1 bad arguments, 2 any other failure (no GPU, no
// database, a dispatch or CUDA call that failed, misses that destroy could not write), with
// the reason on stderr, 3 a wrong result (as sgemm-bench and sgemm-dispatch-bench give it).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <sgemm/dispatch.hpp>

namespace {

void check_cuda(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check_cublas(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

struct Gemm {
    const char* name;
    int N, K;
};
const Gemm kLayerGemms[] = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};
const Gemm kLmHead = {"lm_head", 128256, 4096};
const int kLayers = 32;
const int kBatches[] = {1, 8, 32};
const int kMaxBatch = 32;

class DeviceFloats {
public:
    explicit DeviceFloats(std::size_t count) : count_(count) {
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(float)), "cudaMalloc");
    }
    ~DeviceFloats() { cudaFree(data_); }
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;
    float* get() const { return data_; }
    std::size_t size() const { return count_; }
    std::vector<float> download(std::size_t count) const {
        std::vector<float> host(count);
        check_cuda(cudaMemcpy(host.data(), data_, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
        return host;
    }

private:
    float* data_ = nullptr;
    std::size_t count_;
};

// Uniform values in [-scale, scale): a host block of prime length, drawn from `seed`, copied
// over the buffer again and again (so no two rows of a weight share a pattern, and a 2 GB
// weight does not take 2 GB of host memory).
void fill_random(DeviceFloats& buffer, float scale, std::uint64_t seed) {
    std::vector<float> block(std::min<std::size_t>(4000037, buffer.size()));
    std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
    for (float& x : block) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
        x = scale * (static_cast<float>(state >> 40) / 8388608.0f - 1.0f);
    }
    for (std::size_t at = 0; at < buffer.size(); at += block.size())
        check_cuda(cudaMemcpy(buffer.get() + at, block.data(), std::min(block.size(), buffer.size() - at) * sizeof(float),
                              cudaMemcpyHostToDevice),
                   "cudaMemcpy");
}

// The operands: one weight per GEMM, one input per K and one output per N, each sized for
// the largest batch.
struct Operands {
    std::map<std::string, std::unique_ptr<DeviceFloats>> weights;
    std::map<int, std::unique_ptr<DeviceFloats>> inputs, outputs;

    Operands() {
        std::uint64_t seed = 1;
        for (const Gemm& g : all_gemms()) {
            auto w = std::make_unique<DeviceFloats>(static_cast<std::size_t>(g.K) * g.N);
            fill_random(*w, 1.0f / std::sqrt(static_cast<float>(g.K)), seed++);
            weights[g.name] = std::move(w);
            if (!inputs.count(g.K)) {
                inputs[g.K] = std::make_unique<DeviceFloats>(static_cast<std::size_t>(kMaxBatch) * g.K);
                fill_random(*inputs[g.K], 1.0f, seed++);
            }
            if (!outputs.count(g.N))
                outputs[g.N] = std::make_unique<DeviceFloats>(static_cast<std::size_t>(kMaxBatch) * g.N);
        }
    }
    static std::vector<Gemm> all_gemms() {
        std::vector<Gemm> all(std::begin(kLayerGemms), std::end(kLayerGemms));
        all.push_back(kLmHead);
        return all;
    }
    const float* x(const Gemm& g) const { return inputs.at(g.K)->get(); }
    const float* w(const Gemm& g) const { return weights.at(g.name)->get(); }
    float* y(const Gemm& g) const { return outputs.at(g.N)->get(); }
};

// One way to run a GEMM of the step at batch M into `out` on the stream.
using GemmFn = std::function<void(const Gemm& g, int M, float* out)>;

// The step's 129 GEMMs in order.
void for_each_gemm_of_step(const std::function<void(const Gemm&)>& body) {
    for (int layer = 0; layer < kLayers; ++layer)
        for (const Gemm& g : kLayerGemms) body(g);
    body(kLmHead);
}

// Milliseconds between two events around `enqueue`.
float time_ms(cudaStream_t stream, const std::function<void()>& enqueue) {
    cudaEvent_t start, stop;
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
    check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
    enqueue();
    check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}

float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// ||y - ref|| / ||ref||, or infinity when y holds a NaN or an infinity.
double relative_error(const std::vector<float>& y, const std::vector<float>& ref) {
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        if (!std::isfinite(y[i])) return INFINITY;
        diff += (static_cast<double>(y[i]) - ref[i]) * (static_cast<double>(y[i]) - ref[i]);
        norm += static_cast<double>(ref[i]) * ref[i];
    }
    return std::sqrt(diff / norm);
}

// Which rule chose the kernel and what runs, as "exact: decode MT=8 ...". `out_in`: W is
// stored N x K.
std::string decision_of(const sgemm::Dispatch& dispatch, const Operands& o, const Gemm& g, int M, bool out_in) {
    const sgemm_dispatch_choice_t c =
        dispatch.query(false, out_in, M, g.N, g.K, o.x(g), g.K, o.w(g), out_in ? g.K : g.N, o.y(g), g.N);
    // A later release may add decisions (dispatch.h): one this program does not know is named by number.
    static const char* const decisions[] = {"exact", "nearest", "fallback", "empty", "C scaled alone"};
    const int d = static_cast<int>(c.decision);
    const std::string decision =
        d >= 0 && d < static_cast<int>(std::size(decisions)) ? decisions[d] : "decision " + std::to_string(d);
    const std::string runs = c.route == SGEMM_DISPATCH_ROUTE_CUBLAS    ? "cuBLAS"
                             : c.route == SGEMM_DISPATCH_ROUTE_NONE    ? "nothing"
                             : c.route == SGEMM_DISPATCH_ROUTE_SCALE_C ? "beta * C"
                                                                       : c.kernel;
    return decision + ": " + runs;
}

}  // namespace

int main(int argc, char** argv) {
    std::string db_path;
    int steps = 10;
    bool record_misses = false;
    bool out_in = false;  // W stored N x K
    bool deterministic = false;
    int device = 0;
    // The whole number `text` from `low` to `high`, or -1 where it is no such number (a
    // device ordinal up to 1024, beyond any machine's GPUs: create says whether it exists).
    const auto number = [](const char* text, long low, long high) {
        char* end = nullptr;
        const long value = std::strtol(text, &end, 10);
        return *text != '\0' && *end == '\0' && value >= low && value <= high ? static_cast<int>(value) : -1;
    };
    const char* const usage =
        "usage: dispatch_decode [--db PATH] [--device N] [--steps N] [--weights in-out|out-in] "
        "[--record-misses] [--deterministic] [--help]\n";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::printf("%s(the options are explained at the top of examples/dispatch_decode/dispatch_decode.cpp)\n",
                        usage);
            return 0;
        }
        // An empty --db (an unset variable in a script) is refused, not read as the default.
        if (arg == "--db" && i + 1 < argc && *argv[i + 1] != '\0')
            db_path = argv[++i];
        else if (arg == "--device" && i + 1 < argc && number(argv[i + 1], 0, 1024) >= 0)
            device = number(argv[++i], 0, 1024);
        else if (arg == "--steps" && i + 1 < argc && number(argv[i + 1], 1, 10000) >= 0)
            steps = number(argv[++i], 1, 10000);
        else if (arg == "--record-misses")
            record_misses = true;
        else if (arg == "--deterministic")
            deterministic = true;
        else if (arg == "--weights" && i + 1 < argc && (std::string(argv[i + 1]) == "in-out" ||
                                                         std::string(argv[i + 1]) == "out-in"))
            out_in = std::string(argv[++i]) == "out-in";
        else {
            std::fputs(usage, stderr);
            return 1;
        }
    }

    try {
        sgemm_dispatch_options_t options = sgemm::Dispatch::default_options();
        options.db_path = db_path.empty() ? nullptr : db_path.c_str();
        options.record_misses = record_misses;
        options.deterministic = deterministic;
        options.device = device;
        // Create makes the handle's device current: what follows is made on it.
        sgemm::Dispatch dispatch(options);
        const sgemm_dispatch_info_t info = dispatch.info();
        std::printf("libsgemm_dispatch: %d winners for this GPU (%d skipped), %d kernels loaded, %d compiled; "
                    "create took %.1f ms (CUDA context %.1f ms)\n",
                    info.winners, info.winners_skipped, info.kernels_loaded, info.kernels_compiled, info.create_ms,
                    info.device_ms);

        cudaStream_t stream;
        check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        cublasHandle_t cublas;
        check_cublas(cublasCreate(&cublas), "cublasCreate");
        check_cublas(cublasSetStream(cublas, stream), "cublasSetStream");
        std::printf("preparing about 3 GB of random weights, stored %s...\n",
                    out_in ? "out x in (N x K: NT GEMMs)" : "in x out (K x N: NN GEMMs)");
        const Operands o;
        DeviceFloats reference(static_cast<std::size_t>(kMaxBatch) * kLmHead.N);

        // W's leading dimension: its stored rows are N long (in x out) or K long (out x in).
        const auto ldw = [&](const Gemm& g) { return out_in ? g.K : g.N; };
        const GemmFn with_dispatch = [&](const Gemm& g, int M, float* out) {
            dispatch.gemm(false, out_in, M, g.N, g.K, 1.0f, o.x(g), g.K, o.w(g), ldw(g), 0.0f, out, g.N, stream);
        };
        // Row-major C = X W is column-major C^T = W^T X^T: cuBLAS gets the operands swapped,
        // and W stored N x K is, read column-major, W^T itself, so it asks for a transpose.
        const GemmFn with_cublas = [&](const Gemm& g, int M, float* out) {
            const float one = 1.0f, zero = 0.0f;
            check_cublas(cublasSgemm(cublas, out_in ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, g.N, M, g.K, &one, o.w(g),
                                     ldw(g), o.x(g), g.K, &zero, out, g.N),
                         "cublasSgemm");
        };

        // An engine plans its shapes at start-up (or before capturing graphs), so that no
        // first call pays for choosing a kernel: every GEMM of every batch, nothing launched.
        for (int M : kBatches)
            for_each_gemm_of_step([&](const Gemm& g) {
                dispatch.prepare(false, out_in, M, g.N, g.K, o.x(g), g.K, o.w(g), ldw(g), o.y(g), g.N);
            });

        bool all_ok = true;
        for (int M : kBatches) {
            // Every GEMM of the step against cuBLAS.
            int checked = 0;
            double worst = 0;
            for_each_gemm_of_step([&](const Gemm& g) {
                const std::size_t count = static_cast<std::size_t>(M) * g.N;
                check_cuda(cudaMemsetAsync(o.y(g), 0xFF, count * sizeof(float), stream), "cudaMemsetAsync");  // NaN
                with_dispatch(g, M, o.y(g));
                with_cublas(g, M, reference.get());
                // The copies below run on the legacy default stream, which does not wait for
                // a non-blocking stream: wait here, or they read results still being written.
                check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
                const double error = relative_error(o.outputs.at(g.N)->download(count), reference.download(count));
                worst = std::max(worst, error);
                if (!(error <= 1e-4)) {
                    if (all_ok) std::printf("WRONG: %s at batch %d: relative error %.3g\n", g.name, M, error);
                    all_ok = false;
                }
                ++checked;
            });

            const auto step = [&](const GemmFn& gemm) {
                return time_ms(stream, [&] { for_each_gemm_of_step([&](const Gemm& g) { gemm(g, M, o.y(g)); }); });
            };
            step(with_dispatch), step(with_cublas);  // warm-up
            std::vector<float> dispatch_ms, cublas_ms;
            for (int s = 0; s < steps; ++s) {
                dispatch_ms.push_back(step(with_dispatch));
                cublas_ms.push_back(step(with_cublas));
            }
            const float d = median(dispatch_ms), c = median(cublas_ms);
            std::printf("\nbatch %d: %d GEMMs checked against cuBLAS (worst relative error %.2g); decode step %.3f ms "
                        "with dispatch, %.3f ms with cuBLAS alone: %.2fx\n",
                        M, checked, worst, d, c, c / d);
            std::printf("  %-8s %7s %6s %9s %9s %7s  %s\n", "gemm", "N", "K", "dispatch", "cuBLAS", "", "dispatch chose");
            for (const Gemm& g : Operands::all_gemms()) {
                const auto each_us = [&](const GemmFn& gemm) {
                    std::vector<float> us;
                    for (int r = 0; r < 5; ++r)
                        us.push_back(1000.0f / 20 * time_ms(stream, [&] {
                                         for (int i = 0; i < 20; ++i) gemm(g, M, o.y(g));
                                     }));
                    return median(us);
                };
                const float gd = each_us(with_dispatch), gc = each_us(with_cublas);
                std::printf("  %-8s %7d %6d %7.1fus %7.1fus %6.2fx  %s\n", g.name, g.N, g.K, gd, gc, gc / gd,
                            decision_of(dispatch, o, g, M, out_in).c_str());
            }
        }
        cublasDestroy(cublas);
        dispatch.release_stream(stream);  // its workspace, before the stream goes
        cudaStreamDestroy(stream);
        std::printf("\n%s\n", all_ok ? "every GEMM matched cuBLAS" : "SOME GEMMS WERE WRONG");
        // Destroy's status, which the destructor would drop: the wait for the device, and
        // with --record-misses the last write of the misses.
        if (const sgemm_dispatch_status_t status = dispatch.reset(); status != SGEMM_DISPATCH_SUCCESS) {
            std::fprintf(stderr, "dispatch_decode: destroy: %s: %s\n", sgemm_dispatch_status_string(status),
                         sgemm_dispatch_last_error());
            return 2;
        }
        return all_ok ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dispatch_decode: %s\n", e.what());
        return 2;
    }
}
