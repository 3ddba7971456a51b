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
// (docs/RESULTS.md). The build holds some 236 KB (15,136 instructions on sm_90), and its
// compile is checked to reach this size.
inline constexpr std::size_t kEvictorMinimumCodeBytes = 200u << 10;

// The evictor for `arch`; throws CompileError.
StandaloneKernel compile_instruction_cache_evictor(Arch arch);

class InstructionCacheEvictor {
public:
    // Compiles (once per process and arch) and loads the evictor on the current device.
    explicit InstructionCacheEvictor(const DeviceInfo& device);

    // Enqueues the evictor on `stream`: two blocks per SM, each of which runs all of the code.
    // The block scheduler spreads a grid over idle SMs before it doubles up, so every SM
    // runs at least one.
    void evict(cudaStream_t stream);

    // The SM each block of the last eviction ran on, -1 for each before the first (waits for
    // the device): what the GPU test uses to check that every SM ran the code.
    std::vector<int> block_sms() const;

private:
    Library library_;
    cudaKernel_t kernel_ = nullptr;
    DeviceBuffer<int> block_sm_;
};

}  // namespace sgemm
