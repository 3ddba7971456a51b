// A compiled kernel loaded on the current device, ready to launch on any stream.
#pragma once
#include <cuda_runtime.h>

#include "src/cuda/library.h"
#include "src/families/family.h"
#include "src/jit/compiler.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {

class LoadedKernel {
public:
    // Loads kernel.cubin (which must be for the current device's arch) and raises the
    // kernel's dynamic shared-memory limit when its geometry asks for more than 48 KiB.
    LoadedKernel(const Family& family, const CompiledKernel& kernel);

    // Launches on `stream`; asynchronous. Throws on a launch error.
    void launch(const SgemmArgs& args, cudaStream_t stream) const;

    const Family& family() const { return *family_; }
    const ParamValues& values() const { return values_; }

private:
    const Family* family_;
    ParamValues values_;
    Library library_;
    cudaKernel_t kernel_ = nullptr;
};

}  // namespace sgemm
