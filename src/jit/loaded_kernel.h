// A compiled kernel loaded on the current device, ready to launch on any stream.
#pragma once
#include <cuda_runtime.h>

#include <atomic>

#include "src/cuda/library.h"
#include "src/families/family.h"
#include "src/jit/compiler.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {

class LoadedKernel {
public:
    // Loads kernel.cubin, which must be for the current device's arch.
    LoadedKernel(const Family& family, const CompiledKernel& kernel);

    // Launches on `stream`; asynchronous. args.workspace must hold workspace_bytes() for
    // the shape. Throws on a launch error.
    void launch(const SgemmArgs& args, cudaStream_t stream) const;
    std::size_t workspace_bytes(int M, int N, int K) const;

    const Family& family() const { return *family_; }
    const ParamValues& values() const { return values_; }

private:
    const Family* family_;
    ParamValues values_;
    Library library_;
    cudaKernel_t kernel_ = nullptr;
    // The dynamic shared memory this kernel has opted in to so far. Threads that race here
    // at worst both raise the limit to a value each needs.
    mutable std::atomic<int> shared_opt_in_{48 * 1024};
};

}  // namespace sgemm
