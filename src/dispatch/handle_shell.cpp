#include "src/dispatch/handle_shell.h"

#include "src/dispatch/fork_generation.h"
#include "src/dispatch/last_error.h"

namespace sgemm {
namespace {

constexpr std::uint64_t kLive = 0x53474d4d44535031;       // "SGMMDSP1"
constexpr std::uint64_t kDestroyed = 0x44455354524f5944;  // "DESTROYD"

// The last shell retired; each links to the one before. A global, which a leak checker scans.
std::atomic<sgemm_dispatch*> last_retired{nullptr};

}  // namespace

sgemm_dispatch_t new_handle(Dispatcher* dispatcher) {
    return new sgemm_dispatch{{kLive}, dispatcher, fork_generation(), nullptr};
}

bool inherited_through_fork(sgemm_dispatch_t handle) {
    return handle->magic.load(std::memory_order_relaxed) == kLive && handle->fork_generation != fork_generation();
}

Dispatcher* dispatcher_of(sgemm_dispatch_t handle) {
    if (!handle) {
        fail(SGEMM_DISPATCH_INVALID_HANDLE, "the handle is NULL");
        return nullptr;
    }
    if (inherited_through_fork(handle)) {
        fail(SGEMM_DISPATCH_INVALID_HANDLE,
             "the handle was created before this process was forked from its parent, and CUDA cannot be used in a "
             "child forked after it started: fork workers before the first create, or start them by exec or spawn");
        return nullptr;
    }
    const std::uint64_t magic = handle->magic.load(std::memory_order_relaxed);
    if (magic == kLive) return handle->dispatcher;
    fail(SGEMM_DISPATCH_INVALID_HANDLE, magic == kDestroyed ? "the handle was destroyed"
                                                           : "the handle did not come from sgemm_dispatch_create");
    return nullptr;
}

Dispatcher* retire(sgemm_dispatch_t handle) {
    Dispatcher* const dispatcher = handle->dispatcher;
    if (!inherited_through_fork(handle)) handle->dispatcher = nullptr;  // read before the magic changes
    handle->magic.store(kDestroyed, std::memory_order_relaxed);
    // Threads may destroy handles at once: a lock-free push.
    handle->next_retired = last_retired.load(std::memory_order_relaxed);
    while (!last_retired.compare_exchange_weak(handle->next_retired, handle, std::memory_order_release,
                                               std::memory_order_relaxed)) {
    }
    return dispatcher;
}

}  // namespace sgemm
