// A destroyed handle's shell is kept on purpose (a later call is caught by it). An engine's
// AddressSanitizer build must not report it as a leak, so the shells stay reachable. This
// executable is built with LeakSanitizer and asks it: first that it reports a shell nothing
// reaches (else its silence would prove nothing), then that it reports no retired shell,
// none of thousands retired by eight threads at once, and not the parent's dispatcher in a
// forked child that destroyed its copy of the handle.
#include <gtest/gtest.h>
#include <sanitizer/lsan_interface.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "src/dispatch/handle_shell.h"

namespace {

// A pointer kept in this form is one that LeakSanitizer's scan cannot see.
constexpr std::uintptr_t kHidden = 0x5a5a5a5a5a5a5a5a;

// Heap memory in the dispatcher's place, so that the checker would report it too where the
// shell lost it.
struct StandInDispatcher {
    char bytes[4096];
};

// Handles made on a thread that is joined before any check: no copy of their plain pointers
// is left on a stack the checker scans (it skips the stacks of threads that have ended).
std::vector<std::uintptr_t> hidden_new_handles(int count) {
    std::vector<std::uintptr_t> hidden;
    std::thread([&] {
        for (int i = 0; i < count; ++i) {
            auto* dispatcher = reinterpret_cast<sgemm::Dispatcher*>(new StandInDispatcher);
            hidden.push_back(reinterpret_cast<std::uintptr_t>(sgemm::new_handle(dispatcher)) ^ kHidden);
        }
    }).join();
    return hidden;
}

// destroy's part here: retires the handle and frees its dispatcher.
void destroy_hidden(std::uintptr_t hidden) {
    sgemm::Dispatcher* dispatcher = sgemm::retire(reinterpret_cast<sgemm_dispatch_t>(hidden ^ kHidden));
    delete reinterpret_cast<StandInDispatcher*>(dispatcher);
}

}  // namespace

TEST(HandleShellLeaks, AShellNothingReachesIsReportedAndARetiredOneIsNot) {
    ASSERT_EQ(__lsan_do_recoverable_leak_check(), 0) << "leaks before the test: its checks would mean nothing";
    const std::uintptr_t hidden = hidden_new_handles(1).front();
    std::fprintf(stderr, "The leak report that follows is expected: it checks that LeakSanitizer runs.\n");
    ASSERT_NE(__lsan_do_recoverable_leak_check(), 0) << "LeakSanitizer did not report a shell that nothing reaches";
    std::thread(destroy_hidden, hidden).join();
    EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "a retired shell was reported as a leak (see above)";
}

TEST(HandleShellLeaks, NoShellIsLostWhenThreadsDestroyAtOnce) {
    constexpr int kThreads = 8;
    const std::vector<std::uintptr_t> hidden = hidden_new_handles(4096);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            while (!go.load(std::memory_order_acquire)) {
            }
            for (std::size_t i = t; i < hidden.size(); i += kThreads) destroy_hidden(hidden[i]);
        });
    go.store(true, std::memory_order_release);
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "retired shells were lost from the list (see above)";
}

// A child may not free its parent's dispatcher (fork_generation.h says why): destroy there
// only retires the copy of the shell, which must keep the dispatcher reachable.
TEST(HandleShellLeaks, AForkedChildThatDestroysItsCopyLeaksNothing) {
    const std::uintptr_t hidden = hidden_new_handles(1).front();
    const pid_t child = fork();
    ASSERT_GE(child, 0) << "fork failed";
    if (child == 0) {
        std::thread([&] { (void)sgemm::retire(reinterpret_cast<sgemm_dispatch_t>(hidden ^ kHidden)); }).join();
        _exit(__lsan_do_recoverable_leak_check() == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child that retired its copy reported a leak (see above), status " << status;
    std::thread(destroy_hidden, hidden).join();
}
