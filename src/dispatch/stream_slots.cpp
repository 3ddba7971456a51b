#include "src/dispatch/stream_slots.h"

#include "src/cuda/stream.h"

namespace sgemm {
namespace {

// What cuBLAS's own workspace pool would give a handle on Hopper (its documentation asks
// for 32 MiB there, 4 MiB before): smaller could make it choose slower algorithms than a
// plain cuBLAS call.
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

// A stream's identity for the slot table, into `key`; never 0, which marks a free slot. A
// handle names one stream in every thread, except cudaStreamPerThread, which names each
// thread's own stream: its unique id (with the top bit set, which no pointer has) stands for
// it. 0 and cudaStreamLegacy are the same stream. Returns the runtime's error when the id
// cannot be read.
cudaError_t stream_key(cudaStream_t stream, std::uint64_t& key) noexcept {
    if (stream == cudaStreamPerThread) {
        unsigned long long id = 0;
        if (const cudaError_t e = cudaStreamGetId(stream, &id); e != cudaSuccess) return e;
        key = id | (1ull << 63);
        return cudaSuccess;
    }
    if (stream == nullptr) stream = cudaStreamLegacy;
    key = reinterpret_cast<std::uintptr_t>(stream);
    return cudaSuccess;
}

// cuBLAS's first SGEMM in a process does a one-time set-up that waits for the device's other
// work, and CUDA_MODULE_LOADING=EAGER does not spare it: on an H100 with CUDA 13.0 it waited
// 3 s for a kernel spinning on another stream, as an all-reduce waiting for its peers does,
// where later first calls of other shapes did not wait. So create makes that call, 1 x 1 x 1
// on a stream of its own while nothing else runs, and no gemm meets it. The handle is bound
// again to its slot's stream at the slot's first call; until then it is bound to the legacy
// stream, not to the one destroyed here.
void make_cublas_first_call(const CublasHandle& cublas, void* workspace, std::size_t workspace_bytes) {
    const Stream stream;
    DeviceBuffer<float> operands(3);
    SGEMM_CUDA_CHECK(cudaMemsetAsync(operands.data(), 0, operands.bytes(), stream.get()));
    SgemmArgs args{};
    args.M = args.N = args.K = 1;
    args.alpha = 1.0f;
    args.A = operands.data(), args.lda = 1;
    args.B = operands.data() + 1, args.ldb = 1;
    args.C = operands.data() + 2, args.ldc = 1;
    SGEMM_CUBLAS_CHECK(cublas.bind(stream.get(), workspace, workspace_bytes));
    SGEMM_CUBLAS_CHECK(cublas.sgemm_on_bound_stream(args, false, false));
    stream.synchronize();
    SGEMM_CUBLAS_CHECK(cublas.bind(nullptr, workspace, workspace_bytes));
}

}  // namespace

cublasStatus_t StreamSlot::cublas_sgemm(cudaStream_t stream, const SgemmArgs& args, bool trans_a, bool trans_b) {
    std::lock_guard<std::mutex> lock(turn_mutex_);
    if (!cublas_bound_) {
        // Host-side settings only, so this is legal inside capture too.
        const cublasStatus_t status = cublas_->bind(stream, cublas_workspace_, cublas_workspace_bytes_);
        if (status != CUBLAS_STATUS_SUCCESS) return status;
        cublas_bound_ = true;
    }
    return cublas_->sgemm_on_bound_stream(args, trans_a, trans_b);
}

cudaError_t StreamSlot::launch(const KernelLaunch& kernels, const SgemmArgs& args, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(turn_mutex_);
    return kernels.launch(args, stream);
}

StreamSlots::StreamSlots(int count, std::size_t splitk_bytes, bool with_cublas, cublasMath_t math,
                         std::optional<StreamContexts> contexts)
    : count_(count), splitk_bytes_(splitk_bytes), slots_(new StreamSlot[count]) {
    if (splitk_bytes % 256) throw Error("a stream's split-K workspace must be a multiple of 256 bytes");
    const std::size_t cublas_bytes = with_cublas ? kCublasWorkspaceBytes : 0;
    const std::size_t stride = splitk_bytes_ + cublas_bytes;
    memory_ = DeviceBuffer<unsigned char>(stride * count);
    if (memory_.bytes() > 0) {
        SGEMM_CUDA_CHECK(cudaMemset(memory_.data(), 0, memory_.bytes()));
        SGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    // Slots that hold nothing of a context (no workspace, no cuBLAS handle) serve any stream,
    // and never ask the driver about one (a stream handle it does not know is undefined
    // behaviour there).
    if (contexts)
        contexts_ = *contexts;
    else if (memory_.bytes() > 0 || with_cublas)
        contexts_.slots = current_context();
    for (int i = 0; i < count; ++i) {
        StreamSlot& s = slots_[i];
        unsigned char* base = memory_.data() + stride * i;
        if (splitk_bytes_ > 0) s.splitk_workspace_ = base;
        if (!with_cublas) continue;
        s.cublas_.emplace(math);
        s.cublas_workspace_ = base + splitk_bytes_;
        s.cublas_workspace_bytes_ = cublas_bytes;
    }
    if (with_cublas && count > 0) make_cublas_first_call(*slots_[0].cublas_, slots_[0].cublas_workspace_, cublas_bytes);
}

SlotClaim StreamSlots::slot_for(cudaStream_t stream) noexcept {
    SlotClaim claim;
    std::uint64_t key = 0;
    claim.id_error = stream_key(stream, key);
    if (claim.id_error != cudaSuccess) return claim;
    // A kernel runs in its stream's context, where this memory is not mapped, so a stream of
    // another context is refused before it takes a slot, which it would keep. A stream
    // belongs to one context for life and is checked once, before its claim; but the legacy
    // default stream is one handle in every context, the calling thread's current one's, so
    // it is checked at every call.
    const bool legacy = stream == nullptr || stream == cudaStreamLegacy;
    if (legacy && (claim.other_context = !serves(stream))) return claim;
    if ((claim.slot = slot_held_by(key))) return claim;
    if (!legacy && (claim.other_context = !serves(stream))) return claim;
    std::lock_guard<std::mutex> lock(claim_mutex_);
    if ((claim.slot = slot_held_by(key))) return claim;  // another thread's first call claimed it
    for (int i = 0; i < count_; ++i) {
        // A release may free a slot at any time, but only a claim, under the lock, takes one.
        if (slots_[i].owner_.load(std::memory_order_acquire) != 0) continue;
        slots_[i].owner_.store(key, std::memory_order_release);
        claim.slot = &slots_[i];
        return claim;
    }
    return claim;
}

cudaError_t StreamSlots::release(cudaStream_t stream) noexcept {
    std::uint64_t key = 0;
    if (const cudaError_t e = stream_key(stream, key); e != cudaSuccess) return e;
    // Under the claim lock, so that two releases of one stream cannot both free its slot: the
    // second, finding it again after another stream claimed it, would free that one's.
    std::lock_guard<std::mutex> claims(claim_mutex_);
    StreamSlot* slot = slot_held_by(key);
    if (!slot) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(slot->turn_mutex_);
        slot->cublas_bound_ = false;
    }
    slot->owner_.store(0, std::memory_order_release);  // last: a claim sees the unbound handle
    return cudaSuccess;
}

bool StreamSlots::serves(cudaStream_t stream) const noexcept {
    if (!contexts_.slots) return true;
    // A stream whose context the driver cannot name is let through, as without the check:
    // its launch says what is wrong.
    const std::optional<CUcontext> of_stream = contexts_.of_stream(stream);
    return !of_stream || *of_stream == *contexts_.slots;
}

StreamSlot* StreamSlots::slot_held_by(std::uint64_t key) noexcept {
    for (int i = 0; i < count_; ++i)
        if (slots_[i].owner_.load(std::memory_order_acquire) == key) return &slots_[i];
    return nullptr;
}

int StreamSlots::used() const {
    int n = 0;
    for (int i = 0; i < count_; ++i) n += slots_[i].owner_.load(std::memory_order_relaxed) != 0;
    return n;
}

}  // namespace sgemm
