// Timing a GEMM the way the tuner and the benchmarks do: CUDA events around each run,
// warm-up first, the L2 cache flushed before every timed run, median reported.
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "src/cuda/device_buffer.h"
#include "src/cuda/device.h"

namespace sgemm {

// Writes a buffer twice the size of L2 before each timed run, so every run starts with
// cold caches, as a GEMM in a real model step mostly does: operands come from HBM.
class L2Flusher {
public:
    explicit L2Flusher(const DeviceInfo& device);
    void flush(cudaStream_t stream);

private:
    DeviceBuffer<unsigned char> scratch_;
    unsigned char fill_ = 0;
};

struct TimingStats {
    double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0;
    int runs = 0;
};

struct TimingPlan {
    int warmup = 3;
    int iters = 50;             // timed runs wanted
    double max_seconds = 10.0;  // fewer runs (at least 3) when a run is this slow
};

// Times `launch` (which enqueues one GEMM on the stream) per the plan.
TimingStats time_runs(const std::function<void(cudaStream_t)>& launch, const TimingPlan& plan,
                      L2Flusher& flusher, cudaStream_t stream);

}  // namespace sgemm
