// sgemm_timeline.cuh: per-block timelines, for finding where a launch's time goes
// (`sgemm-bench --timeline`). Only builds compiled with SGEMM_TIMELINE defined record
// anything (compile_kernel with KernelBuild::timeline). In every other build the calls
// below are empty, so the kernels that the tuner times and dispatch launches are unchanged.
//
// A block reads %globaltimer (ns) at each mark it reaches. At its end, thread 0 stores the
// marks, the block's SM and whether the block summed its tile's split-K slices (it arrived
// last: sgemm_splitk.cuh), as
// SGEMM_TIMELINE_WORDS 64-bit words. They go into the workspace past what the split-K
// protocol uses, its counters included even where the launch does not split
// (sgemm_timeline_offset_bytes), at the block's linear index (x fastest, then y, then z).
// A mark a block never reaches stays 0. The marks are thread 0's view of its block: where
// threads of a block part (decode's groups along k), another thread's lag shows in the
// next phase.
//
// On the H200 a timeline build's launches took within 4% of the product build's median
// time, most of them less (docs/RESULTS.md). Printing the marks with device printf instead
// slowed some SMs' loops by up to 40%, so the marks go to memory.
#pragma once
#include "sgemm_common.cuh"

enum SgemmTimelineMark {
    SGEMM_MARK_START,           // the block began
    SGEMM_MARK_LOOP_END,        // its main loop over k ended
    SGEMM_MARK_PARTIAL_STORED,  // split-K: its partial tile is stored (or, by atomics or turns on C, waited and added), before it counts in
    SGEMM_MARK_ARRIVED,         // split-K: it has counted in on its tile
    SGEMM_MARK_END,             // it wrote C, or left its tile to another slice
    SGEMM_TIMELINE_MARKS
};
// The marks, then the SM the block ran on, then 1 if it summed its tile's slices.
#define SGEMM_TIMELINE_WORDS (SGEMM_TIMELINE_MARKS + 2)

// Where the timelines start in the workspace of a launch with `slices` split-K slices:
// never over the counters, which every kernel must leave zeroed for the next launch.
constexpr unsigned long long sgemm_timeline_offset_bytes(int slices, int M, int N) {
    return slices == 1 ? SGEMM_WORKSPACE_COUNTER_BYTES : (sgemm_splitk_workspace_bytes(slices, M, N) + 7ull) & ~7ull;
}

#if defined(__CUDACC__)

struct SgemmTimeline {
#ifdef SGEMM_TIMELINE
    unsigned long long at[SGEMM_TIMELINE_MARKS] = {};
    bool summed = false;

    __device__ __forceinline__ void mark(SgemmTimelineMark m) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(at[m])::"memory");  // not moved past loads or stores
    }
    // Split-K: the block has counted in; `last`: it sums the tile. Returns `last`.
    __device__ __forceinline__ bool arrived(bool last) {
        mark(SGEMM_MARK_ARRIVED);
        summed = last;
        return last;
    }
    __device__ __forceinline__ void store(const SgemmArgs& p) const {
        if (threadIdx.x != 0) return;
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        const unsigned long long block = (blockIdx.z * gridDim.y + blockIdx.y) * (unsigned long long)gridDim.x + blockIdx.x;
        unsigned long long* words = reinterpret_cast<unsigned long long*>(
                                        static_cast<char*>(p.workspace) + sgemm_timeline_offset_bytes(gridDim.y, p.M, p.N)) +
                                    block * SGEMM_TIMELINE_WORDS;
        for (int m = 0; m < SGEMM_TIMELINE_MARKS; ++m) words[m] = at[m];
        words[SGEMM_TIMELINE_MARKS] = sm;
        words[SGEMM_TIMELINE_MARKS + 1] = summed ? 1 : 0;
    }
#else
    __device__ __forceinline__ void mark(SgemmTimelineMark) {}
    __device__ __forceinline__ bool arrived(bool last) { return last; }
    __device__ __forceinline__ void store(const SgemmArgs&) const {}
#endif
};

#endif
