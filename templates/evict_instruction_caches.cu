// A kernel whose only job is to be larger than an SM's instruction caches. The timing code
// (tuner/timing.h) runs it on every SM before each timed GEMM, so that the GEMM starts with
// its code out of the SM, as it does in a model step, where other kernels ran since its last
// launch. Without it, a run that follows a run of the same kernel finds its code still
// cached: on the H200 a kernel with a twice-unrolled k loop ran 6% faster that way than
// after another kernel, and the tuner ranked it first (docs/RESULTS.md).
//
// It is not a GEMM template and is not embedded with them: it belongs to the tuner, and the
// GEMM binaries' cache keys stay independent of it. The compiler options define
//   EVICT_WARPS             warps per block; warp w runs segment w;
//   EVICT_FMAS_PER_SEGMENT  the straight-line FFMAs of each segment.
// Each warp runs its own segment, so an SM fetches the segments in parallel, not one after
// another. Each FFMA has its own constants and depends on the one before, so none folds.
// Every thread's result is stored if it equals a value it never reaches, so no FFMA is
// dropped. Each warp stores the SM it ran on, so a test can check that every segment ran on
// every SM.

template <int SEGMENT>
__device__ __forceinline__ float evict_segment(float x) {
#pragma unroll
    for (int i = 0; i < EVICT_FMAS_PER_SEGMENT; ++i) x = fmaf(x, 1.0001f + SEGMENT * 1e-3f + i * 1e-7f, float(i));
    return x;
}

template <int SEGMENT>
__device__ __forceinline__ float evict_from_segment(int warp, float x) {
    if constexpr (SEGMENT == EVICT_WARPS)
        return x;
    else
        return warp == SEGMENT ? evict_segment<SEGMENT>(x) : evict_from_segment<SEGMENT + 1>(warp, x);
}

extern "C" __global__ void __launch_bounds__(EVICT_WARPS * 32)
    evict_instruction_caches(int* warp_sm, float seed) {
    const int warp = static_cast<int>(threadIdx.x / 32);
    const float x = evict_from_segment<0>(warp, seed + threadIdx.x);
    int* mine = warp_sm + blockIdx.x * EVICT_WARPS + warp;
    if (x == -12345.0f) *mine = -2;
    unsigned sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    if (threadIdx.x % 32 == 0) *mine = static_cast<int>(sm);
}
