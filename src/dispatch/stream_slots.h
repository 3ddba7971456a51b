// What each stream needs of its own: a split-K workspace (one launch at a time may use one:
// SgemmArgs::workspace) and a cuBLAS handle (cuBLAS handles must not be used by two threads
// at once). All of it is allocated, zeroed and created up front, so that a call never
// allocates, synchronises or creates anything, not even inside CUDA graph capture; a stream
// claims a slot on its first call that needs one and keeps it until it is released or the
// handle is destroyed.
#pragma once
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "src/cuda/cublas_handle.h"
#include "src/cuda/device_buffer.h"
#include "src/cuda/driver_contexts.h"
#include "src/jit/loaded_kernel.h"

namespace sgemm {

class StreamSlot {
public:
    void* splitk_workspace() const { return splitk_workspace_; }
    // The two ways a call uses the slot, on the slot's stream. Callers of one stream from
    // many threads take turns in both: a cuBLAS handle must not be used by two threads at
    // once, and a launch of two kernels that pass data through the workspace (a split-K sum
    // pass reading the slices' partials, a main kernel reading the staged operands) must
    // not have another thread's launch enqueued between its two, which would overwrite the
    // workspace before the second kernel reads it.
    cublasStatus_t cublas_sgemm(cudaStream_t stream, const SgemmArgs& args, bool trans_a, bool trans_b);
    cudaError_t launch(const KernelLaunch& kernels, const SgemmArgs& args, cudaStream_t stream);

private:
    friend class StreamSlots;
    std::atomic<std::uint64_t> owner_{0};  // stream_key() of the stream, 0 while free
    void* splitk_workspace_ = nullptr;
    std::mutex turn_mutex_;
    std::optional<CublasHandle> cublas_;  // absent when the handle never calls cuBLAS
    void* cublas_workspace_ = nullptr;
    std::size_t cublas_workspace_bytes_ = 0;
    bool cublas_bound_ = false;  // under turn_mutex_
};

// What StreamSlots::slot_for found for a stream: its slot, or why it has none.
struct SlotClaim {
    StreamSlot* slot = nullptr;
    // The runtime's error where the stream's id cannot be read (cudaStreamPerThread after a
    // device fault, say).
    cudaError_t id_error = cudaSuccess;
    // The stream belongs to another CUDA context than the slots' memory (a stream of another
    // device, or of a context made with the driver API, or the legacy default stream while
    // such a context is current), where its kernels could not reach that memory.
    bool other_context = false;
    // Else, with no slot: every slot belongs to another stream.
};

// How StreamSlots tells the streams its memory serves from those of another context.
struct StreamContexts {
    // The context the slots' memory and cuBLAS handles belong to; nothing where they are none
    // or the driver cannot say, and then every stream is served.
    std::optional<CUcontext> slots;
    // The context a stream's kernels run in (src/cuda/driver_contexts.h); a test's stand-in.
    std::optional<CUcontext> (*of_stream)(cudaStream_t stream) noexcept = context_of_stream;
};

class StreamSlots {
public:
    // `count` slots of `splitk_bytes` each (counters zeroed; a multiple of 256 bytes, as
    // workspace_bytes_needed gives, so that the cuBLAS workspace after it stays aligned), with
    // a cuBLAS handle in `math` mode and its workspace each when `with_cublas`, all in the
    // calling thread's current context, whose streams alone may then claim them (`contexts`,
    // where given, says which streams those are instead: for tests without a GPU).
    // Synchronises the device once, and where `with_cublas` makes cuBLAS's first call
    // (make_cublas_first_call: its one-time set-up would wait for other streams' kernels).
    StreamSlots(int count, std::size_t splitk_bytes, bool with_cublas, cublasMath_t math,
                std::optional<StreamContexts> contexts = std::nullopt);

    // The slot of `stream`, claimed now if it has none (SlotClaim says why not). A stream
    // that holds a slot finds it by a lock-free scan of `count` atomics; only a claim takes a
    // lock, so that a stream never holds two slots.
    SlotClaim slot_for(cudaStream_t stream) noexcept;

    // Frees the slot `stream` holds, if any, for another stream; its cuBLAS handle is bound
    // to the next owner's stream on that one's first cuBLAS call. The caller has no call on
    // `stream` in flight. The runtime's error when the stream's id cannot be read
    // (cudaStreamPerThread), else cudaSuccess.
    cudaError_t release(cudaStream_t stream) noexcept;

    int count() const { return count_; }
    int used() const;
    std::size_t splitk_bytes() const { return splitk_bytes_; }

private:
    StreamSlot* slot_held_by(std::uint64_t stream_key) noexcept;
    // Whether `stream`'s kernels run in the context of the slots' memory.
    bool serves(cudaStream_t stream) const noexcept;

    int count_;
    std::size_t splitk_bytes_;
    std::unique_ptr<StreamSlot[]> slots_;
    // Held while a stream claims or releases a slot. Without it, two threads' first calls on
    // one stream could claim two slots (one thread a later slot, the other an earlier one
    // that a third stream freed in between), and two releases of one stream could free a slot
    // a third stream had claimed in between.
    std::mutex claim_mutex_;
    DeviceBuffer<unsigned char> memory_;  // every slot's workspaces, in one allocation
    StreamContexts contexts_;
};

}  // namespace sgemm
