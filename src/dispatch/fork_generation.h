// Which side of a fork() this process is on, told without a system call on the hot path.
// A CUDA context cannot be used in a child forked after CUDA started in its parent, and the
// thread that writes a handle's misses runs only in the parent: a child must neither use
// nor free a handle it inherited (destroying it would free the parent's CUDA resources
// through a context the child cannot use, and write the parent's unwritten miss counts a
// second time).
#pragma once
#include <cstdint>

namespace sgemm {

// A number that every fork() advances in the child (a pthread_atfork child handler,
// registered when the library loads), so a handle created before a fork reads as another
// process's in the child. A child made without the fork handlers (glibc's _Fork, a raw
// clone) reads its parent's number. Lock-free: one relaxed load.
std::uint64_t fork_generation() noexcept;

}  // namespace sgemm
