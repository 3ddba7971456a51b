#include "src/jit/loaded_kernel.h"

namespace sgemm {

LoadedKernel::LoadedKernel(const Family& family, const CompiledKernel& kernel)
    : family_(&family), values_(kernel.values), library_(kernel.cubin) {
    kernel_ = library_.kernel(kernel.lowered_name);
}

void LoadedKernel::launch(const SgemmArgs& args, cudaStream_t stream) const {
    const LaunchGeometry g = family_->geometry(values_, args.M, args.N, args.K);
    if (g.dynamic_shared_bytes > 48 * 1024) {
        int device = 0;
        SGEMM_CUDA_CHECK(cudaGetDevice(&device));
        SGEMM_CUDA_CHECK(cudaKernelSetAttributeForDevice(
            kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(g.dynamic_shared_bytes), device));
    }
    SgemmArgs copy = args;
    void* params[] = {&copy};
    SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), g.grid, g.block, params,
                                      g.dynamic_shared_bytes, stream));
}

}  // namespace sgemm
