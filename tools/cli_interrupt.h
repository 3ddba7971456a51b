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

// Ends a run that stopped for the signal, once its output is written: by the signal itself,
// with its default action, so that a calling shell sees a process the signal ended (status
// 130 for SIGINT, 143 for SIGTERM) and stops its script too, as it would without the handler.
// Returns 0 at once if no signal came.
int end_by_interrupt();

}  // namespace sgemm
