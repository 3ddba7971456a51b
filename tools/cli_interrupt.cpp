#include "tools/cli_interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <cstdio>
#include <cstring>

namespace sgemm {

namespace {

constexpr int kInterrupts[] = {SIGINT, SIGTERM};

// A handler may only touch lock-free atomics and call async-signal-safe functions (write,
// clock_gettime, kill).
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<long long> g_first_signal_ns{0};  // when g_signal came, on the monotonic clock
static_assert(std::atomic<long long>::is_always_lock_free);
// The child that pass_interrupts_to passes signals on to; 0 for none.
std::atomic<pid_t> g_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);
const char* g_tool = "";
const char* g_what_stops = "";

// The same signal again within this long, sent by a process, is the same request: one that
// reached the process twice, sent to its process group and passed on by its parent as well (a
// job control's SIGTERM to every process of a job), or sent twice, as coreutils' timeout does
// (to the process, then to its group). The terminal sends each Ctrl-C once to each process of
// the foreground group, so a second from it is a second request however soon it comes.
constexpr long long kSameRequestNs = 100'000'000;

// Whether another process (kill, sigqueue, tgkill: si_code SI_USER, SI_QUEUE, SI_TKILL, all 0
// or below) sent the signal, rather than the kernel for the terminal (SI_KERNEL, positive).
bool sent_by_a_process(const siginfo_t* info) { return info != nullptr && info->si_code <= 0; }

long long monotonic_ns() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

void write_text(const char* text) {
    const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;  // nothing can be done in a handler about a message that did not arrive
}

// Ends the process by `signal_number` with its default action, as if no handler were set.
void end_by(int signal_number) {
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

enum class Arrival { first, same_request, second };

// Records the first signal; tells a second apart from the first's repeat.
Arrival arrival_of(int signal_number, const siginfo_t* info) {
    const long long now = monotonic_ns();
    int first = 0;
    if (g_signal.compare_exchange_strong(first, signal_number)) {
        g_first_signal_ns.store(now);
        return Arrival::first;
    }
    const bool repeat = first == signal_number && sent_by_a_process(info) &&
                        now - g_first_signal_ns.load() < kSameRequestNs;
    return repeat ? Arrival::same_request : Arrival::second;
}

void on_signal(int signal_number, siginfo_t* info, void*) {
    const int saved_errno = errno;  // the code the signal interrupted may be about to read it
    switch (arrival_of(signal_number, info)) {
        case Arrival::same_request:
            break;
        case Arrival::second:
            // A second signal ends the process as it would have without this handler. Decided
            // here rather than by SA_RESETHAND: NVRTC puts back the handler it found when a
            // compile began, and without that flag.
            end_by(signal_number);
            break;
        case Arrival::first:
            write_text("\n");
            write_text(g_tool);
            write_text(": stopping ");
            write_text(g_what_stops);
            // The same signal again quits: name the one that came (a job control's SIGTERM too).
            write_text(signal_number == SIGINT ? " (Ctrl-C again to quit at once)\n"
                                               : " (a second signal quits at once)\n");
            break;
    }
    errno = saved_errno;
}

// The parent's handler (pass_interrupts_to). Only a signal another process sent is passed on:
// the terminal's reaches the child directly. With no child to stop, a second signal ends this
// process, as it would the child.
void on_signal_for_child(int signal_number, siginfo_t* info, void*) {
    const int saved_errno = errno;
    const Arrival arrival = arrival_of(signal_number, info);
    const pid_t child = g_child.load();
    if (child > 0 && sent_by_a_process(info)) kill(child, signal_number);
    if (child == 0 && arrival == Arrival::second) end_by(signal_number);
    errno = saved_errno;
}

// Handlers that do not interrupt each other (a SIGTERM during a SIGINT's waits for it), and
// that learn who sent the signal.
struct sigaction handler_action(void (*handler)(int, siginfo_t*, void*)) {
    struct sigaction action {};
    action.sa_sigaction = handler;
    action.sa_mask = interrupt_set();
    action.sa_flags = SA_RESTART | SA_SIGINFO;
    return action;
}

struct sigaction g_started_with[2];
bool g_passing = false;  // pass_interrupts_to installed its handler, saving g_started_with

}  // namespace

sigset_t interrupt_set() {
    sigset_t set;
    sigemptyset(&set);
    for (int signal_number : kInterrupts) sigaddset(&set, signal_number);
    return set;
}

void pass_interrupts_to(pid_t child) {
    g_child.store(child);
    if (g_passing) return;
    g_passing = true;
    const struct sigaction action = handler_action(on_signal_for_child);
    for (int i = 0; i < 2; ++i) {
        sigaction(kInterrupts[i], nullptr, &g_started_with[i]);
        // One the process was started with ignored stays ignored, in the child too.
        if (g_started_with[i].sa_handler != SIG_IGN) sigaction(kInterrupts[i], &action, nullptr);
    }
}

void restore_interrupts_as_started() {
    g_child.store(0);
    if (!g_passing) return;
    for (int i = 0; i < 2; ++i) sigaction(kInterrupts[i], &g_started_with[i], nullptr);
    g_passing = false;
}

void stop_on_interrupt(const char* tool, const char* what_stops) {
    g_tool = tool;
    g_what_stops = what_stops;
    const struct sigaction action = handler_action(on_signal);
    for (int signal_number : kInterrupts) {
        // A signal the process was started with ignored (a shell's background job, nohup)
        // stays ignored, as it would without this.
        struct sigaction before {};
        if (sigaction(signal_number, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
        sigaction(signal_number, &action, nullptr);
    }
}

bool interrupt_requested() { return g_signal.load() != 0; }

int interrupt_signal() { return g_signal.load(); }

int end_by_interrupt() { return end_by_signal(g_signal.load()); }

int end_by_signal(int signal_number) {
    if (signal_number == 0) return 0;
    std::fflush(nullptr);
    end_by(signal_number);
    return 128 + signal_number;  // only if the signal did not end the process
}

}  // namespace sgemm
