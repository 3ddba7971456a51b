#include "tools/cli_interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace sgemm {

namespace {

// A handler may only touch lock-free atomics and call async-signal-safe functions (write).
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
const char* g_tool = "";
const char* g_what_stops = "";

void write_text(const char* text) {
    const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;  // nothing can be done in a handler about a message that did not arrive
}

// Ends the process by `signal_number` with its default action, as if no handler were set.
void end_by(int signal_number) {
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

void on_signal(int signal_number) {
    int none = 0;
    if (!g_signal.compare_exchange_strong(none, signal_number)) {
        // A second signal ends the process as it would have without this handler. Decided
        // here rather than by SA_RESETHAND: NVRTC puts back the handler it found when a
        // compile began, and without that flag.
        end_by(signal_number);
        return;
    }
    write_text("\n");
    write_text(g_tool);
    write_text(": stopping ");
    write_text(g_what_stops);
    // The same signal again quits: name the one that came (a job control's SIGTERM too).
    write_text(signal_number == SIGINT ? " (Ctrl-C again to quit at once)\n" : " (a second signal quits at once)\n");
}

}  // namespace

void stop_on_interrupt(const char* tool, const char* what_stops) {
    g_tool = tool;
    g_what_stops = what_stops;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int signal_number : {SIGINT, SIGTERM}) {
        // A signal the process was started with ignored (a shell's background job, nohup)
        // stays ignored, as it would without this.
        struct sigaction before {};
        if (sigaction(signal_number, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
        sigaction(signal_number, &action, nullptr);
    }
}

bool interrupt_requested() { return g_signal.load() != 0; }

int end_by_interrupt() {
    const int signal_number = g_signal.load();
    if (signal_number == 0) return 0;
    std::fflush(nullptr);
    end_by(signal_number);
    return 128 + signal_number;  // only if the signal did not end the process
}

}  // namespace sgemm
