// Ctrl-C (SIGINT) and SIGTERM during a long run: the first asks the run to stop at its next
// safe point, so that what it finished is reported and kept; a second ends the process at
// once, as the signal would have without this.
#pragma once

namespace sgemm {

// Installs the handlers. `tool` and `what_stops` make the line printed on the first signal:
// "TOOL: stopping WHAT_STOPS (Ctrl-C again to quit at once)". Both must outlive the run.
void stop_on_interrupt(const char* tool, const char* what_stops);

// Whether a first signal has come.
bool interrupt_requested();

// The exit status of a run that stopped for it: 128 plus the signal's number, as a shell
// reports a process that the signal ended (130 for SIGINT, 143 for SIGTERM); 0 if none came.
int interrupt_exit_status();

}  // namespace sgemm
