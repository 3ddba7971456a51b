// Ctrl-C (SIGINT) and SIGTERM during a long run: the first asks the run to stop at its next
// safe point, so that what it finished is reported and kept; a second ends the process at
// once, as the signal would have without this. The same signal again within 100 ms, sent by a
// process, is not a second: it is the first reaching the process twice (sent to its process
// group and passed on by a parent, or sent twice, as coreutils' timeout does). A second Ctrl-C
// from the terminal is a second however soon it comes: the terminal sends each once.
#pragma once
#include <signal.h>
#include <sys/types.h>

namespace sgemm {

// Installs the handlers. `tool` and `what_stops` make the line printed on the first signal:
// "TOOL: stopping WHAT_STOPS (Ctrl-C again to quit at once)". Both must outlive the run.
void stop_on_interrupt(const char* tool, const char* what_stops);

// Whether a first signal has come.
bool interrupt_requested();
// The first signal that came (SIGINT or SIGTERM), or 0.
int interrupt_signal();

// SIGINT and SIGTERM as a set, to hold them (sigprocmask) where a handler must not run yet.
sigset_t interrupt_set();

// For a process that runs its work in a child (tools/cli_child_process.h) and waits for it:
// a signal that another process sends to this one (kill, timeout, a job control's SIGTERM)
// is passed on to `child` (0: none now), while one from the terminal (Ctrl-C) is not, since
// the terminal sends it to the child too, as one of its process group. Either is remembered
// (interrupt_signal). While a child runs, this process does not end by them: the child stops,
// or quits at a second signal, as stop_on_interrupt says, and this one then ends as the child
// did. With no child, a second signal ends this process at once. The first call installs the
// handler.
void pass_interrupts_to(pid_t child);
// In a child just forked from such a process: the signals' actions as the process started
// with them, before pass_interrupts_to.
void restore_interrupts_as_started();

// Ends a run that stopped for the signal, once its output is written: by the signal itself,
// with its default action, so that a calling shell sees a process the signal ended (status
// 130 for SIGINT, 143 for SIGTERM) and stops its script too, as it would without the handler.
// Returns 0 at once if no signal came.
int end_by_interrupt();
// The same for `signal_number` (a child's, say); 0 returns 0.
int end_by_signal(int signal_number);

}  // namespace sgemm
