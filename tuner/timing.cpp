#include "tuner/timing.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "src/cuda/stream.h"

namespace sgemm {

CacheFlusher::CacheFlusher(const DeviceInfo& device)
    : scratch_(std::max<std::size_t>(2 * device.l2_bytes, 64u << 20)), evictor_(device) {}

void CacheFlusher::flush(cudaStream_t stream) {
    SGEMM_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), ++fill_, scratch_.bytes(), stream));
    evictor_.evict(stream);
}

double time_one_run(const std::function<void(cudaStream_t)>& launch, CacheFlusher& flusher, cudaStream_t stream) {
    Event start, stop;
    flusher.flush(stream);
    start.record(stream);
    launch(stream);
    SGEMM_CUDA_CHECK(cudaGetLastError());
    stop.record(stream);
    return stop.elapsed_since(start);
}

double median_of(std::vector<double>& ms) {
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

namespace {
TimingStats stats_of(std::vector<double> ms) {
    TimingStats s;
    s.runs = static_cast<int>(ms.size());
    s.median_ms = median_of(ms);
    s.min_ms = ms.front();
    s.max_ms = ms.back();
    return s;
}
}  // namespace

AdaptiveTiming time_adaptive(const std::function<void(cudaStream_t)>& launch, double best_ms, double reject_factor,
                             CacheFlusher& flusher, cudaStream_t stream) {
    for (int i = 0; i < 2; ++i) time_one_run(launch, flusher, stream);
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) ms.push_back(time_one_run(launch, flusher, stream));
    AdaptiveTiming out;
    out.stats = stats_of(ms);
    if (best_ms > 0 && out.stats.median_ms > reject_factor * best_ms) {
        out.rejected = true;
        return out;
    }
    double previous = out.stats.median_ms;
    while (ms.size() < 40) {
        for (int i = 0; i < 5; ++i) ms.push_back(time_one_run(launch, flusher, stream));
        out.stats = stats_of(ms);
        const bool settled = std::abs(out.stats.median_ms - previous) <= 0.005 * previous;
        if (ms.size() >= 10 && settled) break;
        previous = out.stats.median_ms;
    }
    return out;
}

TimingStats time_runs(const std::function<void(cudaStream_t)>& launch, const TimingPlan& plan,
                      CacheFlusher& flusher, cudaStream_t stream) {
    return time_in_alternation({launch}, plan, flusher, stream).front();
}

std::vector<TimingStats> time_in_alternation(const std::vector<std::function<void(cudaStream_t)>>& launches,
                                             const TimingPlan& plan, CacheFlusher& flusher, cudaStream_t stream) {
    // The warm-up rounds spend the budget too, so a large warm-up count on a slow kernel cannot
    // run for hours: they stop once they have used it (one round at least, since the last
    // round's time judges how many timed rounds fit the rest). A round's cost is all it puts on
    // the stream, the flushes included: for a kernel of microseconds the flush of twice the L2
    // before each run is most of it, and a budget of the launches alone let a second's budget
    // run for tens of seconds.
    const std::size_t n = launches.size();
    const double budget_ms = plan.max_seconds * 1e3;
    double round_ms = 0.0, warm_ms = 0.0;
    for (int i = 0; i < plan.warmup && (i == 0 || warm_ms < budget_ms); ++i) {
        Event round_start, round_end;
        round_start.record(stream);
        for (std::size_t j = 0; j < n; ++j) {
            flusher.flush(stream);
            launches[(i + j) % n](stream);
        }
        SGEMM_CUDA_CHECK(cudaGetLastError());
        round_end.record(stream);
        round_ms = round_end.elapsed_since(round_start);
        warm_ms += round_ms;
    }

    // Slow kernels (the naive rung at 8192) get fewer rounds, as many as the budget's rest
    // holds: never fewer than 3, nor more than asked for. Without a warm-up there is no time
    // to judge them by, so all are made.
    const double left_ms = std::max(0.0, budget_ms - warm_ms);
    int rounds = plan.iters;
    if (plan.warmup > 0 && round_ms * plan.iters > left_ms)
        rounds = std::min(plan.iters, std::max(3, static_cast<int>(left_ms / std::max(round_ms, 1e-3))));

    // All runs are enqueued before any is read back, so host work never gaps the device. Each
    // round starts at the next launch, so that none always runs first.
    std::vector<Event> starts(rounds * n), stops(rounds * n);
    for (int r = 0; r < rounds; ++r)
        for (std::size_t j = 0; j < n; ++j) {
            const std::size_t l = (r + j) % n;
            flusher.flush(stream);
            starts[r * n + l].record(stream);
            launches[l](stream);
            stops[r * n + l].record(stream);
        }
    SGEMM_CUDA_CHECK(cudaGetLastError());
    std::vector<TimingStats> stats;
    for (std::size_t l = 0; l < n; ++l) {
        std::vector<double> ms(rounds);
        for (int r = 0; r < rounds; ++r) ms[r] = stops[r * n + l].elapsed_since(starts[r * n + l]);
        stats.push_back(stats_of(ms));
    }
    return stats;
}

}  // namespace sgemm
