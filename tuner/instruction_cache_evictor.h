// Evicting every SM's instruction caches before a timed run (templates/
// evict_instruction_caches.cu says why), so that the timing sees a GEMM's cold start, as a
// model step does, and not the warm one of back-to-back runs of the same kernel.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "src/cuda/device.h"
#include "src/cuda/device_buffer.h"
#include "src/cuda/library.h"
#include "src/jit/arch.h"
#include "src/jit/compiler.h"

namespace sgemm {

// The evictor's code must exceed what an SM caches. On the H200, 35 KB of its code did not
// slow the GEMM that showed the effect, 65 KB did in part and 126 KB in full
// (docs/RESULTS.md). The build holds some 236 KB of code (15,136 instructions on sm_90);
// the CPU test checks its cubin, 3 KB more than the code, against this size.
inline constexpr std::size_t kEvictorMinimumCodeBytes = 200u << 10;

// The evictor for `arch`; throws CompileError.
StandaloneKernel compile_instruction_cache_evictor(Arch arch);

class InstructionCacheEvictor {
public:
    // Nothing is compiled yet: a process that never evicts (a tuner re-run that finds every
    // shape tuned) never pays the compile.
    explicit InstructionCacheEvictor(const DeviceInfo& device);

    // Enqueues the evictor on `stream`, compiling (once per process and arch) and loading it
    // first if this is the first call: two blocks per SM, each running all of the code. On
    // the H200 the block scheduler gave every SM at least one such block; CUDA does not
    // promise it, so the GPU test checks it (tests/gpu/test_timing.cpp).
    void evict(cudaStream_t stream);

    // The SM each warp of the last eviction ran on, block by block (waits for the device);
    // -1 for a warp that did not run. For the GPU test.
    std::vector<int> warp_sms() const;

private:
    Arch arch_;
    int blocks_;
    Library library_;
    cudaKernel_t kernel_ = nullptr;  // null until the first eviction
    DeviceBuffer<int> warp_sm_;
};

}  // namespace sgemm
