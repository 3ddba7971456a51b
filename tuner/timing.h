// Timing a GEMM the way the tuner and the benchmarks do: CUDA events around each run,
// warm-up first, the caches made cold before every timed run, median reported.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "src/cuda/device_buffer.h"
#include "src/cuda/device.h"
#include "tuner/instruction_cache_evictor.h"

namespace sgemm {

// Before each timed run, writes a buffer twice the size of L2 and runs the instruction-cache
// evictor on every SM, so every run starts as a GEMM in a real model step mostly does: its
// operands come from HBM, and its code is no longer in the SMs, since other kernels ran
// after its last launch.
class CacheFlusher {
public:
    explicit CacheFlusher(const DeviceInfo& device);
    void flush(cudaStream_t stream);
    const InstructionCacheEvictor& evictor() const { return evictor_; }

private:
    DeviceBuffer<unsigned char> scratch_;
    unsigned char fill_ = 0;
    InstructionCacheEvictor evictor_;
};

struct TimingStats {
    double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0;
    int runs = 0;
};

struct TimingPlan {
    int warmup = 3;             // untimed runs (rounds, in alternation) first, fewer once they use
                                // max_seconds; the last one's time judges how many timed runs the rest
                                // of max_seconds holds
    int iters = 50;             // timed runs (rounds) wanted
    double max_seconds = 10.0;  // the budget, warm-ups included: fewer timed runs (at least 3, at most
                                // iters) when they would pass it
};

// Times `launch` (which enqueues one GEMM on the stream) per the plan.
TimingStats time_runs(const std::function<void(cudaStream_t)>& launch, const TimingPlan& plan,
                      CacheFlusher& flusher, cudaStream_t stream);

// Times each of `launches` per the plan, in alternation: every warm-up and timed round runs
// each launch once, so that drift in clocks or temperature during the timing reaches all of
// them alike (a kernel and cuBLAS compared near parity), and each round starts at the next
// launch in turn, so that none always runs first. The plan's budget covers whole rounds,
// their cache flushes included, and each launch gets the same number of runs. One
// TimingStats per launch, in the order given.
// `launches` must not be empty, nor plan.iters under 1 (the CLIs refuse such counts).
std::vector<TimingStats> time_in_alternation(const std::vector<std::function<void(cudaStream_t)>>& launches,
                                             const TimingPlan& plan, CacheFlusher& flusher, cudaStream_t stream);

// The tuner's timing: an adaptive number of runs, with early rejection.
//  - 2 warm-up runs, then 3 timed runs; if their median is already more than
//    reject_factor times `best_ms` (the fastest candidate so far; 0 when none), stop: the
//    candidate is rejected;
//  - else more runs, 5 at a time, until the median moves by less than 0.5% between
//    batches (at least 10 runs) or 43 runs are done (the 3, then 8 batches).
struct AdaptiveTiming {
    TimingStats stats;
    bool rejected = false;
};
AdaptiveTiming time_adaptive(const std::function<void(cudaStream_t)>& launch, double best_ms, double reject_factor,
                             CacheFlusher& flusher, cudaStream_t stream);

// One flushed, timed run, in milliseconds (the tuner's final re-timings in alternation).
double time_one_run(const std::function<void(cudaStream_t)>& launch, CacheFlusher& flusher, cudaStream_t stream);

// The median of `ms` (sorted in place).
double median_of(std::vector<double>& ms);

}  // namespace sgemm
