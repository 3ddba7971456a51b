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
    // The warm-up runs spend the budget too, so a large warm-up count on a slow kernel cannot
    // run for hours: they stop once they have used it (one at least, since the last one's
    // time judges how many timed runs fit the rest).
    const double budget_ms = plan.max_seconds * 1e3;
    double first_ms = 0.0, warm_ms = 0.0;
    for (int i = 0; i < plan.warmup && (i == 0 || warm_ms < budget_ms); ++i) {
        first_ms = time_one_run(launch, flusher, stream);
        warm_ms += first_ms;
    }

    // Slow kernels (the naive rung at 8192) get fewer runs, as many as the budget's rest
    // holds: never fewer than 3, nor more than asked for. Without a warm-up there is no time
    // to judge them by, so all are made.
    const double left_ms = std::max(0.0, budget_ms - warm_ms);
    int runs = plan.iters;
    if (plan.warmup > 0 && first_ms * plan.iters > left_ms)
        runs = std::min(plan.iters, std::max(3, static_cast<int>(left_ms / std::max(first_ms, 1e-3))));

    // All runs are enqueued before any is read back, so host work never gaps the device.
    std::vector<Event> starts(runs), stops(runs);
    for (int i = 0; i < runs; ++i) {
        flusher.flush(stream);
        starts[i].record(stream);
        launch(stream);
        stops[i].record(stream);
    }
    SGEMM_CUDA_CHECK(cudaGetLastError());
    std::vector<double> ms(runs);
    for (int i = 0; i < runs; ++i) ms[i] = stops[i].elapsed_since(starts[i]);
    return stats_of(ms);
}

}  // namespace sgemm
