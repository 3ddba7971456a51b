// Where a launch's time goes, block by block: runs a timeline build of a kernel
// (KernelBuild::timeline, templates/sgemm_timeline.cuh), reads back each block's marks and
// sums them up. It backs `sgemm-bench --timeline`. On the H200 it showed what the split-K
// finish costs the decode and batch-32 winners (docs/RESULTS.md).
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/jit/loaded_kernel.h"
#include "templates/sgemm_timeline.cuh"
#include "tuner/gemm_problem.h"
#include "tuner/timing.h"

namespace sgemm {

struct BlockTimeline {
    std::array<std::uint64_t, SGEMM_TIMELINE_MARKS> at{};  // %globaltimer, ns; 0: the block never got there
    unsigned sm = 0;
    bool summed = false;  // it summed its tile's split-K slices
};

struct LaunchTimeline {
    double event_us = 0.0;  // the launch's CUDA-event time
    std::vector<BlockTimeline> blocks;  // in linear block order (x fastest, then y, then z)
};

// Why a timeline cannot record `values` of `family`, or "" when it can. A timeline records
// one kernel's blocks: a configuration with a second kernel (the stream-K tail, whose blocks
// would overwrite the marks with their partial tiles, or the sum pass, which marks nothing and
// would end after the timeline) is refused.
std::string timeline_refusal(const Family& family, const ParamValues& values);

// The workspace a timeline build needs for an M x N x K launch: the family's own, then
// SGEMM_TIMELINE_WORDS 64-bit words per block.
std::size_t timeline_workspace_bytes(const LoadedKernel& kernel, int M, int N, int K);

// One launch of `kernel`, which must be a timeline build, on `problem`'s operands, with L2
// flushed first. The problem's workspace must hold timeline_workspace_bytes.
LaunchTimeline record_timeline(const LoadedKernel& kernel, const GemmProblem& problem, CacheFlusher& flusher,
                               cudaStream_t stream);

// Times in µs from the first block's start.
struct TimelineSummary {
    int blocks = 0;
    int sms = 0;  // SMs that ran at least one block
    int fewest_blocks_per_sm = 0, most_blocks_per_sm = 0;
    double event_us = 0.0;
    double loops_end_us = 0.0;  // when the last main loop ended
    double last_end_us = 0.0;   // when the last block ended
    // Split-K, medians over the blocks that summed their tile: from the end of the block's
    // loop to its partial stored, from there to its counting in, and from there to its end.
    int summing_blocks = 0;
    double store_us = 0.0, arrive_us = 0.0, sum_us = 0.0;
};

// Throws Error when a block lacks its start or end mark, or the marks run backwards.
TimelineSummary summarize(const LaunchTimeline& timeline);

// "384 blocks on 132 SMs (2 to 3 each); main loops end by 41.9 µs, the last block at 46.8
// µs; kernel 49.8 µs (event)", and for split-K a second line with the summing blocks.
std::string describe(const TimelineSummary& summary);

}  // namespace sgemm
