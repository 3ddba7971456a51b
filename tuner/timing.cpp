#include "tuner/timing.h"

#include <algorithm>
#include <vector>

#include "src/cuda/stream.h"

namespace sgemm {

L2Flusher::L2Flusher(const DeviceInfo& device) : scratch_(std::max<std::size_t>(2 * device.l2_bytes, 64u << 20)) {}

void L2Flusher::flush(cudaStream_t stream) {
    SGEMM_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), ++fill_, scratch_.bytes(), stream));
}

namespace {
double run_once_ms(const std::function<void(cudaStream_t)>& launch, L2Flusher& flusher, cudaStream_t stream) {
    Event start, stop;
    flusher.flush(stream);
    start.record(stream);
    launch(stream);
    SGEMM_CUDA_CHECK(cudaGetLastError());
    stop.record(stream);
    return stop.elapsed_since(start);
}
}  // namespace

TimingStats time_runs(const std::function<void(cudaStream_t)>& launch, const TimingPlan& plan,
                      L2Flusher& flusher, cudaStream_t stream) {
    double first_ms = 0.0;
    for (int i = 0; i < std::max(1, plan.warmup); ++i) first_ms = run_once_ms(launch, flusher, stream);

    // Slow kernels (the naive rung at 8192) get fewer runs, never fewer than 3.
    int runs = plan.iters;
    if (first_ms * plan.iters > plan.max_seconds * 1e3)
        runs = std::max(3, static_cast<int>(plan.max_seconds * 1e3 / std::max(first_ms, 1e-3)));

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
    std::sort(ms.begin(), ms.end());

    TimingStats s;
    s.runs = runs;
    s.min_ms = ms.front();
    s.max_ms = ms.back();
    s.median_ms = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
    return s;
}

}  // namespace sgemm
