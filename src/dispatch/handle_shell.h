// The handle behind sgemm_dispatch_t: a small shell around the dispatcher. destroy frees the
// dispatcher but keeps the 32-byte shell, marked destroyed, so that a later call is caught by
// its magic number instead of reading freed memory. The shell also says on which side of a
// fork it was created (src/dispatch/fork_generation.h). Needs no CUDA: the dispatcher is only
// pointed to here.
#pragma once
#include <sgemm/dispatch.h>

#include <atomic>
#include <cstdint>

namespace sgemm {
class Dispatcher;
}

struct sgemm_dispatch {
    std::atomic<std::uint64_t> magic;
    sgemm::Dispatcher* dispatcher;
    std::uint64_t fork_generation;
    sgemm_dispatch* next_retired;  // the shell retired before this one (see retire)
};
static_assert(sizeof(sgemm_dispatch) == 32 || sizeof(void*) != 8, "include/sgemm/dispatch.h says a 32-byte shell");

namespace sgemm {

// A live handle around `dispatcher`, on this side of any fork. The handle owns the dispatcher
// once this returns; if it throws (no memory), the caller still does.
sgemm_dispatch_t new_handle(Dispatcher* dispatcher);

// The dispatcher of a live handle, or nullptr (with last_error() set) for NULL, a destroyed
// handle, memory that is no handle, or a handle a fork() copied from the parent process.
Dispatcher* dispatcher_of(sgemm_dispatch_t handle);

// A live handle that a fork() copied into this process from its parent.
bool inherited_through_fork(sgemm_dispatch_t handle);

// Marks `handle` destroyed and returns the dispatcher it held, for the caller to free (or, in
// a forked child, to leave alone). The shell is never freed (a later call must still read its
// magic number): it joins a list of retired shells that a global reaches, so that a leak
// checker (LeakSanitizer in an engine's AddressSanitizer build) counts it as memory in use,
// not as a leak. The list is linked through the shells themselves: retiring allocates nothing
// and cannot fail. A shell this process created drops its dispatcher pointer, which the
// caller frees (else the checker would take a later block at the same address for one in
// use); a shell a fork() copied from the parent keeps it: there it is the one pointer to the
// parent's dispatcher, whose memory the child may not free, and keeps that reachable too.
[[nodiscard]] Dispatcher* retire(sgemm_dispatch_t handle);

}  // namespace sgemm
