#include "src/jit/loaded_kernel.h"

namespace sgemm {

LoadedKernel::LoadedKernel(const Family& family, const CompiledKernel& kernel)
    : family_(&family), values_(kernel.values), library_(kernel.cubin) {
    kernel_ = library_.kernel(kernel.lowered_name);
}

std::size_t LoadedKernel::workspace_bytes(int M, int N, int K) const {
    return family_->workspace_bytes(values_, M, N, K);
}

void LoadedKernel::launch(const SgemmArgs& args, cudaStream_t stream) const {
    const LaunchGeometry g = family_->geometry(values_, args.M, args.N, args.K);
    if (!args.workspace && workspace_bytes(args.M, args.N, args.K) > 0)
        throw Error(family_->describe(values_) + " needs a workspace for this shape and got none");
    // Past 48 KiB a kernel must opt in to dynamic shared memory. Families size it by
    // shape, so the limit is raised on the first launch that needs more, and only then.
    if (g.dynamic_shared_bytes > 48 * 1024 && static_cast<int>(g.dynamic_shared_bytes) > shared_opt_in_) {
        SGEMM_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel_),
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(g.dynamic_shared_bytes)));
        shared_opt_in_ = static_cast<int>(g.dynamic_shared_bytes);
    }
    SgemmArgs copy = args;
    void* params[] = {&copy};
    SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), g.grid, g.block, params,
                                      g.dynamic_shared_bytes, stream));
}

}  // namespace sgemm
