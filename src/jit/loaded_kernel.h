// A compiled kernel loaded on the current device, ready to launch on any stream.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>

#include "src/cuda/library.h"
#include "src/families/family.h"
#include "src/jit/compiler.h"
#include "templates/sgemm_common.cuh"

namespace sgemm {

// Everything a launch of one kernel at one shape needs, computed once: dispatch keeps one
// per shape key, so its hot path is this launch and nothing else.
struct KernelLaunch {
    cudaKernel_t kernel = nullptr;
    LaunchGeometry geometry;  // the main kernel's; grid.x may be 0 when the tail takes every tile
    std::size_t workspace_bytes = 0;  // args.workspace must hold this many
    // The second kernel (Family::second_geometry), launched after the main one: the
    // stream-K tail or the split-K sum pass; or before it: the staging kernel
    // (second_runs_first). None when null.
    cudaKernel_t second = nullptr;
    LaunchGeometry second_geometry;
    bool second_runs_first = false;
    // The sum pass on sm_90 and later: launched as a programmatic dependent of the main
    // kernel, so that its blocks start as the main kernel's end (templates/sgemm_splitk.cuh).
    bool second_overlaps_main = false;

    // Launches on `stream` (cudaLaunchKernel; the second kernel through cudaLaunchKernelExC):
    // asynchronous, allocates nothing, throws nothing.
    cudaError_t launch(const SgemmArgs& args, cudaStream_t stream) const noexcept;
};

class LoadedKernel {
public:
    // Loads kernel.cubin, which must be for the current device's arch, and its kernels into
    // the current context: now, not at their first launch, as lazy loading would.
    LoadedKernel(const Family& family, const CompiledKernel& kernel);

    // Launches on `stream`; asynchronous. args.workspace must hold workspace_bytes() for
    // the shape and the alignment class of args' pointers and leading dimensions. Throws on
    // a launch error.
    void launch(const SgemmArgs& args, cudaStream_t stream) const;
    // For a call of alignment class `alignment` (alignment_class in db/shape_key.h).
    std::size_t workspace_bytes(int M, int N, int K, int alignment) const;
    int sms() const { return sms_; }
    // The launch of an M x N x K problem of alignment class `alignment`, with each kernel's
    // shared-memory limit raised where the shape needs more than it allows so far. Throws on
    // a CUDA error.
    KernelLaunch prepare(int M, int N, int K, int alignment) const;
    // The same with `values` that name this binary too (serves(values)): another split count
    // on the same side of 1. Throws an Error for values of another binary.
    KernelLaunch prepare(int M, int N, int K, int alignment, const ParamValues& values) const;
    // Whether this binary runs `values`: the same template instance and second kernel.
    bool serves(const ParamValues& values) const;

    const Family& family() const { return *family_; }
    const ParamValues& values() const { return values_; }

private:
    const Family* family_;
    ParamValues values_;
    Library library_;
    cudaKernel_t kernel_ = nullptr;
    cudaKernel_t second_ = nullptr;  // the second kernel, where the configuration has one
    int sms_ = 0;                    // the current device's, at load: one tail block each
    bool programmatic_launch_ = false;  // programmatic dependent launches: sm_90+, CUDA 12.3+
    // The dynamic shared memory each kernel may use so far: what the 48 KiB default leaves
    // beside its static share, raised by opt-ins, one at a time.
    mutable std::atomic<int> shared_opt_in_{0};
    mutable std::atomic<int> second_shared_opt_in_{0};
    mutable std::mutex opt_in_mutex_;
    // Raises `kernel`'s dynamic shared-memory limit, `opt_in`, to `needed` where it is less.
    void allow_shared(cudaKernel_t kernel, std::atomic<int>& opt_in, unsigned needed) const;
};

}  // namespace sgemm
