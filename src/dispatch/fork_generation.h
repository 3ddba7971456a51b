// Which side of a fork() this process is on, told without a system call on the hot path.
// A CUDA context does not carry over into a child made by fork, and the thread that writes
// a handle's misses runs only in the parent: a child must neither use nor free a handle it
// inherited (destroying it would wait on a thread that is not there, free the parent's
// CUDA resources, and write the parent's unwritten miss counts a second time).
#pragma once
#include <cstdint>

namespace sgemm {

// A number that every fork() advances in the child (a pthread_atfork child handler,
// registered by the first call), so a handle created before a fork reads as another
// process's in the child. Lock-free.
std::uint64_t fork_generation() noexcept;

}  // namespace sgemm
