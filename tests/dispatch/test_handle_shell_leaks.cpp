// A destroyed handle's shell is kept on purpose (a later call is caught by it). An engine's
// AddressSanitizer build must not report it as a leak, so the shells stay reachable. This
// executable is built with -fsanitize=leak and asks LeakSanitizer itself, first that it does
// report a shell nothing reaches (else its silence would prove nothing), then that it does
// not report retired shells, from many threads at once.
#include <gtest/gtest.h>
#include <sanitizer/lsan_interface.h>

#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "src/dispatch/handle_shell.h"

namespace {

// A pointer kept in this form is one that LeakSanitizer's scan cannot see.
constexpr std::uintptr_t kHidden = 0x5a5a5a5a5a5a5a5a;

sgemm::Dispatcher* stand_in_dispatcher() {
    static int somewhere;
    return reinterpret_cast<sgemm::Dispatcher*>(&somewhere);
}

// Not inlined, so that no copy of the plain pointer is left in a live frame or register of
// the test (a callee's frame is below the stack pointer once it returns, where the scan does
// not look).
__attribute__((noinline)) std::uintptr_t hidden_new_handle() {
    return reinterpret_cast<std::uintptr_t>(sgemm::new_handle(stand_in_dispatcher())) ^ kHidden;
}

__attribute__((noinline)) void retire_hidden(std::uintptr_t hidden) {
    sgemm::retire(reinterpret_cast<sgemm_dispatch_t>(hidden ^ kHidden));
}

}  // namespace

TEST(HandleShellLeaks, RetiredShellsAreNoLeakButAnUnreachedShellIs) {
    std::uintptr_t hidden = hidden_new_handle();
    std::fprintf(stderr, "The leak report that follows is expected: it checks that LeakSanitizer runs.\n");
    ASSERT_NE(__lsan_do_recoverable_leak_check(), 0) << "LeakSanitizer did not report a shell that nothing reaches";

    retire_hidden(hidden);
    hidden = 0;
    std::vector<std::uintptr_t> more(64);
    for (std::uintptr_t& h : more) h = hidden_new_handle();
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&more, t] {
            for (std::size_t i = t; i < more.size(); i += 8) retire_hidden(more[i]);
        });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "a retired shell was reported as a leak (see above)";
}
