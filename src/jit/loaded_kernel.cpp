#include "src/jit/loaded_kernel.h"

#include "db/shape_key.h"
#include "src/cuda/check.h"

namespace sgemm {

LoadedKernel::LoadedKernel(const Family& family, const CompiledKernel& kernel)
    : family_(&family),
      values_(kernel.values),
      library_(kernel.cubin),
      shared_opt_in_(48 * 1024 - kernel.ptxas.shared_bytes) {  // static shared memory counts too
    kernel_ = library_.kernel(kernel.lowered_name);
    if (!kernel.second_lowered_name.empty()) second_ = library_.kernel(kernel.second_lowered_name);
    int device = 0, major = 0, runtime = 0;
    SGEMM_CUDA_CHECK(cudaGetDevice(&device));
    SGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
    SGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    SGEMM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    // Stream capture records programmatic dependencies as graph edges from CUDA 12.3 on; an
    // older runtime launches the sum pass plainly, which dispatch's graphs can hold.
    programmatic_launch_ = major >= 9 && runtime >= 12030;
}

std::size_t LoadedKernel::workspace_bytes(int M, int N, int K, int alignment) const {
    return family_->workspace_bytes(values_, M, N, K, sms_, alignment);
}

bool LoadedKernel::serves(const ParamValues& values) const {
    return family_->name_expression(values) == family_->name_expression(values_) &&
           family_->second_name_expression(values) == family_->second_name_expression(values_);
}

KernelLaunch LoadedKernel::prepare(int M, int N, int K, int alignment) const {
    return prepare(M, N, K, alignment, values_);
}

KernelLaunch LoadedKernel::prepare(int M, int N, int K, int alignment, const ParamValues& values) const {
    if (!serves(values))
        throw Error(family_->describe(values) + " is another binary than the loaded " + family_->describe(values_));
    KernelLaunch l;
    l.kernel = kernel_;
    l.geometry = family_->geometry(values, M, N, K);
    l.workspace_bytes = family_->workspace_bytes(values, M, N, K, sms_, alignment);
    l.geometry.grid.x = family_->stream_k_split(values, M, N, K, sms_).main_blocks;
    if (const LaunchGeometry second = family_->second_geometry(values, M, N, K, sms_, alignment); second.grid.x > 0) {
        if (!second_) throw Error(family_->describe(values) + " was loaded without its second kernel");
        l.second = second_;
        l.second_geometry = second;
        l.second_overlaps_main = family_->has_sum_pass(values) && programmatic_launch_;
        l.second_runs_first = family_->stages_operands(values);
    }
    // Past 48 KiB of static and dynamic shared memory together a kernel must opt in to
    // more dynamic shared memory. Families size it by shape, so the limit is raised on the
    // first launch that needs more, and only then.
    const int shared = static_cast<int>(l.geometry.dynamic_shared_bytes);
    if (shared > shared_opt_in_) {
        // Under the lock the limit only goes up: two threads that each set it unlocked could
        // leave the smaller value set and the larger one recorded.
        std::lock_guard<std::mutex> lock(opt_in_mutex_);
        if (shared > shared_opt_in_) {
            for (cudaKernel_t k : {kernel_, second_})
                if (k)
                    SGEMM_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(k),
                                                          cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
            shared_opt_in_ = shared;
        }
    }
    return l;
}

void LoadedKernel::launch(const SgemmArgs& args, cudaStream_t stream) const {
    const KernelLaunch l =
        prepare(args.M, args.N, args.K, alignment_class(args.A, args.lda, args.B, args.ldb, args.C, args.ldc));
    if (!args.workspace && l.workspace_bytes > 0)
        throw Error(family_->describe(values_) + " needs a workspace for this shape and got none");
    SGEMM_CUDA_CHECK(l.launch(args, stream));
}

cudaError_t KernelLaunch::launch(const SgemmArgs& args, cudaStream_t stream) const noexcept {
    SgemmArgs copy = args;  // cudaLaunchKernel takes non-const pointers to the arguments
    void* params[] = {&copy};
    const auto launch_main = [&] {
        if (geometry.grid.x == 0) return cudaSuccess;
        return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), geometry.grid, geometry.block, params,
                                geometry.dynamic_shared_bytes, stream);
    };
    const auto launch_second = [&] {
        cudaLaunchConfig_t config = {};
        config.gridDim = second_geometry.grid;
        config.blockDim = second_geometry.block;
        config.dynamicSmemBytes = second_geometry.dynamic_shared_bytes;
        config.stream = stream;
        cudaLaunchAttribute overlap[1] = {};
        overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        overlap[0].val.programmaticStreamSerializationAllowed = 1;
        if (second_overlaps_main) {
            config.attrs = overlap;
            config.numAttrs = 1;
        }
        return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(second), params);
    };
    if (!second) return launch_main();
    const cudaError_t first = second_runs_first ? launch_second() : launch_main();
    if (first != cudaSuccess) return first;
    return second_runs_first ? launch_main() : launch_second();
}

}  // namespace sgemm
