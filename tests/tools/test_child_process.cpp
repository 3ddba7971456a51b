// Work in a child process (tools/cli_child_process.h), as sgemm-tune runs its tune: what the
// child hands back, how it ended, and a signal sent to the parent passed on to it once. These
// run on the CPU, in CI, where sgemm-tune itself stops before its child reaches a GPU.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "tools/cli_child_process.h"
#include "tools/cli_interrupt.h"

using namespace sgemm;

namespace {

std::atomic<int> g_terms_seen{0};
void count_term(int) { ++g_terms_seen; }

// Waits up to `seconds` for `done`.
template <class Done>
bool wait_for(Done done, double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

// Sends SIGINT to this process as the terminal sends a Ctrl-C, with si_code SI_KERNEL. Linux
// lets a process queue a signal with the kernel's code to itself only.
bool ctrl_c_from_the_terminal() {
    siginfo_t info{};
    info.si_signo = SIGINT;
    info.si_code = SI_KERNEL;
    return syscall(SYS_rt_sigqueueinfo, getpid(), SIGINT, &info) == 0;
}

}  // namespace

TEST(ChildProcess, HandsBackWhatItWritesAndItsExitStatus) {
    const ChildEnd end = run_in_child([](int fd) {
        const std::string bytes(200000, 'x');  // more than a pipe holds at once
        return write_all(fd, bytes + "end") ? 3 : 9;
    });
    EXPECT_EQ(end.signal, 0);
    EXPECT_EQ(end.exit_status, 3);
    EXPECT_EQ(end.output, std::string(200000, 'x') + "end");
}

TEST(ChildProcess, AChildThatASignalEndsSaysWhich) {
    const ChildEnd end = run_in_child([](int fd) {
        write_all(fd, "partial");
        raise(SIGKILL);
        return 0;
    });
    EXPECT_EQ(end.signal, SIGKILL);
    EXPECT_EQ(end.output, "partial");
}

// Another process's SIGTERM to the parent (a job scheduler's stop) reaches the child once, and
// the parent remembers it. The child sends it here, as that other process. The parent is a
// child of the test itself, whose own state of signals stays as it was for the other tests.
TEST(ChildProcess, ASignalSentToTheParentIsPassedOnToTheChildOnce) {
    const ChildEnd parent = run_in_child([](int fd) {
        const ChildEnd end = run_in_child([](int inner_fd) {
            signal(SIGTERM, count_term);
            kill(getppid(), SIGTERM);
            const bool came = wait_for([] { return g_terms_seen.load() > 0; }, 10);
            std::this_thread::sleep_for(std::chrono::milliseconds(300));  // room for a second, which must not come
            write_all(inner_fd, std::to_string(g_terms_seen.load()));
            return came ? 0 : 1;
        });
        write_all(fd, "child " + std::to_string(end.exit_status) + " " + std::to_string(end.signal) + ", SIGTERMs " +
                          end.output + ", parent's " + std::to_string(interrupt_signal()));
        return 0;
    });
    EXPECT_EQ(parent.signal, 0);
    EXPECT_EQ(parent.output, "child 0 0, SIGTERMs 1, parent's " + std::to_string(SIGTERM));
}

// The child starts with the signals' actions the process started with, not its parent's
// handler, which would pass a signal on to a child of its own. (Nested, as above.)
TEST(ChildProcess, TheChildStartsWithTheSignalActionsTheProcessStartedWith) {
    const ChildEnd parent = run_in_child([](int fd) {
        const ChildEnd end = run_in_child([](int inner_fd) {
            struct sigaction term {}, interrupt {};
            sigaction(SIGTERM, nullptr, &term);
            sigaction(SIGINT, nullptr, &interrupt);
            const bool as_started = term.sa_handler == SIG_DFL && interrupt.sa_handler == SIG_DFL;
            write_all(inner_fd, as_started ? "default" : "the parent's");
            return 0;
        });
        write_all(fd, end.output);
        return 0;
    });
    EXPECT_EQ(parent.output, "default");
}

// stop_on_interrupt: the same signal twice at once (a group's signal passed on as well, or
// timeout's two) is one request to stop; a second one later quits at once.
TEST(Interrupts, TheSameSignalTwiceAtOnceIsOneStopAndOneLaterQuits) {
    const ChildEnd end = run_in_child([](int fd) {
        stop_on_interrupt("cli_tests", "as asked");
        raise(SIGINT);
        raise(SIGINT);
        write_all(fd, interrupt_requested() ? "stopping;" : "running;");
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        raise(SIGINT);
        write_all(fd, "still here");
        return 0;
    });
    EXPECT_EQ(end.output, "stopping;");
    EXPECT_EQ(end.signal, SIGINT);
}

// The terminal sends each Ctrl-C once, so two from it are two requests however soon the second
// comes: a quick double Ctrl-C quits at once.
TEST(Interrupts, TwoCtrlCsFromTheTerminalAtOnceQuit) {
    const ChildEnd end = run_in_child([](int fd) {
        stop_on_interrupt("cli_tests", "as asked");
        if (!ctrl_c_from_the_terminal()) {
            write_all(fd, std::string("rt_sigqueueinfo: ") + std::strerror(errno));
            return 1;
        }
        write_all(fd, interrupt_requested() ? "stopping;" : "running;");
        ctrl_c_from_the_terminal();
        write_all(fd, "still here");
        return 0;
    });
    EXPECT_EQ(end.output, "stopping;");
    EXPECT_EQ(end.signal, SIGINT);
}
