#include "src/dispatch/fork_generation.h"

#include <pthread.h>

#include <atomic>

namespace sgemm {
namespace {

std::atomic<std::uint64_t> generation{0};

void advance_in_child() { generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

std::uint64_t fork_generation() noexcept {
    // Registered by the first call, create's: a fork before any handle exists leaves nothing
    // to tell apart. pthread_atfork fails only out of memory, and then an inherited handle
    // goes undetected, as before this check existed.
    static const bool registered = pthread_atfork(nullptr, nullptr, advance_in_child) == 0;
    static_cast<void>(registered);
    return generation.load(std::memory_order_relaxed);
}

}  // namespace sgemm
