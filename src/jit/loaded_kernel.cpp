#include "src/jit/loaded_kernel.h"

#include "db/shape_key.h"
#include "src/cuda/check.h"

namespace sgemm {

namespace {

// Shared memory a block may use, static and dynamic together, before its kernel must opt in.
constexpr int kSharedWithoutOptIn = 48 * 1024;

// Loads `kernel` into the current context and returns what its dynamic shared memory may be
// without an opt-in. Under lazy loading (CUDA's default on Linux since 12.2) a kernel is
// loaded at its first launch, and a load may wait for the context to be idle: a kernel of
// another stream that spins until later work arrives (an inference engine's all-reduce, say)
// would then never let the GEMM start. Loaded here, the first launch, in a stream capture or a
// decode step, carries no load, and a failed load is said at load, not at a GEMM. Querying
// the attributes is what loads it.
int load_into_context(cudaKernel_t kernel) {
    cudaFuncAttributes attributes;
    SGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)));
    return kSharedWithoutOptIn - static_cast<int>(attributes.sharedSizeBytes);
}

}  // namespace

LoadedKernel::LoadedKernel(const Family& family, const CompiledKernel& kernel)
    : family_(&family), values_(kernel.values), library_(kernel.cubin) {
    kernel_ = library_.kernel(kernel.lowered_name);
    shared_opt_in_ = load_into_context(kernel_);
    if (!kernel.second_lowered_name.empty()) {
        second_ = library_.kernel(kernel.second_lowered_name);
        second_shared_opt_in_ = load_into_context(second_);
    }
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
    allow_shared(kernel_, shared_opt_in_, l.geometry.dynamic_shared_bytes);
    if (l.second) allow_shared(second_, second_shared_opt_in_, l.second_geometry.dynamic_shared_bytes);
    return l;
}

void LoadedKernel::allow_shared(cudaKernel_t kernel, std::atomic<int>& opt_in, unsigned needed) const {
    // Past 48 KiB of static and dynamic shared memory together a kernel must opt in to more
    // dynamic shared memory. Families size it by shape, so the limit is raised on the first
    // launch that needs more, and only then.
    const int shared = static_cast<int>(needed);
    if (shared <= opt_in) return;
    // Under the lock the limit only goes up: two threads that each set it unlocked could leave
    // the smaller value set and the larger one recorded.
    std::lock_guard<std::mutex> lock(opt_in_mutex_);
    if (shared <= opt_in) return;
    SGEMM_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    opt_in = shared;
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
