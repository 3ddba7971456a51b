// cp.async (sm_80+): copies from global to shared memory that bypass registers and do not
// stall the issuing thread. A thread issues copies, closes them into a group with
// sgemm_cp_async_commit, and later waits until at most PENDING of its groups are in flight.
// The copied data is visible to other threads only after that wait and a __syncthreads().
//
// Each copy takes a source size: bytes past it are zero-filled in shared memory, and a size
// of 0 reads nothing. Kernels zero-fill the parts of a tile that lie outside a matrix this
// way, pointing the copy at any valid address.
#pragma once

// Generic-to-shared address conversion for the cp.async operand.
__device__ __forceinline__ unsigned sgemm_smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies src_bytes (0 or 4) from global to shared and zero-fills the rest of 4 bytes.
__device__ __forceinline__ void sgemm_cp_async4(void* smem, const float* gmem, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(sgemm_smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}

// Copies src_bytes (0..16) from a 16-byte aligned global address, zero-filling to 16.
// .cg skips L1: tiles are staged in shared memory, so L1 would only hold dead copies.
__device__ __forceinline__ void sgemm_cp_async16(void* smem, const float* gmem, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(sgemm_smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}

// The same copies with an L2 cache policy (sgemm_evict_first_policy) for the lines they
// bring in.
__device__ __forceinline__ void sgemm_cp_async4(void* smem, const float* gmem, int src_bytes,
                                                unsigned long long policy) {
    asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 4, %2, %3;\n"
                 :: "r"(sgemm_smem_addr(smem)), "l"(gmem), "r"(src_bytes), "l"(policy));
}

__device__ __forceinline__ void sgemm_cp_async16(void* smem, const float* gmem, int src_bytes,
                                                 unsigned long long policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n"
                 :: "r"(sgemm_smem_addr(smem)), "l"(gmem), "r"(src_bytes), "l"(policy));
}

// Lines fetched under this policy are the first L2 evicts. For an operand streamed once,
// it keeps L2's other lines, among them dirty ones whose write-back would otherwise compete
// with the stream for DRAM. Not volatile: the compiler may create it once and reuse it.
__device__ __forceinline__ unsigned long long sgemm_evict_first_policy() {
    unsigned long long policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ void sgemm_cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int PENDING>
__device__ __forceinline__ void sgemm_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(PENDING));
}
