#include "src/dispatch/fork_generation.h"

#include <pthread.h>

#include <atomic>

namespace sgemm {
namespace {

std::atomic<std::uint64_t> generation{0};

void advance_in_child() { generation.fetch_add(1, std::memory_order_relaxed); }

// Registered when the library loads, not at the first call: a first call inside a
// function-local static's guard, with another thread forking meanwhile, left the child
// waiting on the guard forever (a review reproduced it). pthread_atfork fails only out of
// memory, and then an inherited handle goes undetected, as before this check existed.
const bool registered = pthread_atfork(nullptr, nullptr, advance_in_child) == 0;

}  // namespace

std::uint64_t fork_generation() noexcept {
    static_cast<void>(registered);
    return generation.load(std::memory_order_relaxed);
}

}  // namespace sgemm
