// Progress of long work written where no terminal redraws it. On a terminal a tool redraws
// its bar at every step; into a file or a pipe (a CI log, nohup) a line per step would flood
// it, and none would leave a long search silent for minutes (an exhaustive search compiles
// thousands of kernels for one shape). So such output gets a line at most once an interval.
#pragma once
#include <chrono>

namespace sgemm {

class SteadyLines {
public:
    using Clock = std::chrono::steady_clock;
    explicit SteadyLines(Clock::duration interval) : interval_(interval) {}

    // A new piece of work (a shape) starts at `now`: its first line is due an interval later.
    void restart(Clock::time_point now) { last_ = now; }

    // Whether a line is due at `now`; if so, the next is due an interval after it.
    bool due(Clock::time_point now);

private:
    Clock::duration interval_;
    Clock::time_point last_{};
};

}  // namespace sgemm
