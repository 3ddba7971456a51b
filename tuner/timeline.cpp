#include "tuner/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "src/cuda/check.h"
#include "src/util/error.h"

namespace sgemm {
namespace {

double median_of_values(std::vector<double> v) { return v.empty() ? 0.0 : median_of(v); }

}  // namespace

std::string timeline_refusal(const Family& family, const ParamValues& values) {
    if (family.has_stream_k_tail(values))
        return "a timeline records one kernel's blocks, and " + family.describe(values) +
               " adds a stream-K tail: time it with SK=0";
    if (family.has_sum_pass(values))
        return "a timeline records one kernel's blocks, and " + family.describe(values) +
               " sums its slices in a second kernel: time it with SUM_PASS=0";
    if (family.stages_operands(values))
        return "a timeline records one kernel's blocks, and " + family.describe(values) +
               " runs a staging kernel first, whose copies take the workspace where the timeline would go: time it "
               "with ALIGNED=0 or 1";
    return "";
}

std::size_t timeline_workspace_bytes(const LoadedKernel& kernel, int M, int N, int K) {
    const LaunchGeometry g = kernel.family().geometry(kernel.values(), M, N, K);
    return sgemm_timeline_offset_bytes(static_cast<int>(g.grid.y), M, N) +
           8ull * SGEMM_TIMELINE_WORDS * g.blocks();
}

LaunchTimeline record_timeline(const LoadedKernel& kernel, const GemmProblem& problem, CacheFlusher& flusher,
                               cudaStream_t stream) {
    const ProblemSpec& s = problem.spec();
    if (const std::string why = timeline_refusal(kernel.family(), kernel.values()); !why.empty()) throw Error(why);
    if (problem.workspace_bytes() < timeline_workspace_bytes(kernel, s.M, s.N, s.K))
        throw Error("the problem's workspace is too small for a timeline of " + kernel.family().describe(kernel.values()));
    const LaunchGeometry g = kernel.family().geometry(kernel.values(), s.M, s.N, s.K);
    const SgemmArgs args = problem.args();
    char* const words = static_cast<char*>(args.workspace) + sgemm_timeline_offset_bytes(static_cast<int>(g.grid.y), s.M, s.N);
    const std::size_t bytes = 8ull * SGEMM_TIMELINE_WORDS * g.blocks();
    // Zeros first: a kernel built without the timeline leaves them, and summarize says so.
    SGEMM_CUDA_CHECK(cudaMemsetAsync(words, 0, bytes, stream));

    LaunchTimeline out;
    out.event_us = 1e3 * time_one_run([&](cudaStream_t st) { kernel.launch(args, st); }, flusher, stream);
    std::vector<std::uint64_t> host(bytes / 8);
    SGEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), words, bytes, cudaMemcpyDeviceToHost, stream));
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    out.blocks.resize(g.blocks());
    for (std::size_t b = 0; b < out.blocks.size(); ++b) {
        const std::uint64_t* w = host.data() + b * SGEMM_TIMELINE_WORDS;
        std::copy(w, w + SGEMM_TIMELINE_MARKS, out.blocks[b].at.begin());
        out.blocks[b].sm = static_cast<unsigned>(w[SGEMM_TIMELINE_MARKS]);
        out.blocks[b].summed = w[SGEMM_TIMELINE_MARKS + 1] != 0;
    }
    return out;
}

TimelineSummary summarize(const LaunchTimeline& timeline) {
    if (timeline.blocks.empty()) throw Error("a timeline without blocks");
    std::uint64_t first_start = ~0ull, last_loop_end = 0, last_end = 0;
    std::map<unsigned, int> blocks_per_sm;
    std::vector<double> store, arrive, sum;
    for (std::size_t b = 0; b < timeline.blocks.size(); ++b) {
        const BlockTimeline& t = timeline.blocks[b];
        const auto& at = t.at;
        if (at[SGEMM_MARK_START] == 0 || at[SGEMM_MARK_LOOP_END] == 0 || at[SGEMM_MARK_END] == 0)
            throw Error("block " + std::to_string(b) +
                        " has no start, loop-end or end mark: was the kernel compiled as a timeline build?");
        std::uint64_t previous = 0;
        for (int m = 0; m < SGEMM_TIMELINE_MARKS; ++m) {
            if (at[m] == 0) continue;  // a mark this block does not pass (split-K only)
            if (at[m] < previous) throw Error("block " + std::to_string(b) + "'s marks run backwards");
            previous = at[m];
        }
        if (t.summed && (at[SGEMM_MARK_PARTIAL_STORED] == 0 || at[SGEMM_MARK_ARRIVED] == 0))
            throw Error("block " + std::to_string(b) + " summed its tile but has no split-K marks");
        first_start = std::min<std::uint64_t>(first_start, at[SGEMM_MARK_START]);
        last_loop_end = std::max<std::uint64_t>(last_loop_end, at[SGEMM_MARK_LOOP_END]);
        last_end = std::max<std::uint64_t>(last_end, at[SGEMM_MARK_END]);
        ++blocks_per_sm[t.sm];
        if (t.summed) {
            store.push_back(1e-3 * (at[SGEMM_MARK_PARTIAL_STORED] - at[SGEMM_MARK_LOOP_END]));
            arrive.push_back(1e-3 * (at[SGEMM_MARK_ARRIVED] - at[SGEMM_MARK_PARTIAL_STORED]));
            sum.push_back(1e-3 * (at[SGEMM_MARK_END] - at[SGEMM_MARK_ARRIVED]));
        }
    }
    TimelineSummary s;
    s.blocks = static_cast<int>(timeline.blocks.size());
    s.sms = static_cast<int>(blocks_per_sm.size());
    s.fewest_blocks_per_sm = s.blocks;
    for (const auto& [sm, count] : blocks_per_sm) {
        s.fewest_blocks_per_sm = std::min(s.fewest_blocks_per_sm, count);
        s.most_blocks_per_sm = std::max(s.most_blocks_per_sm, count);
    }
    s.event_us = timeline.event_us;
    s.loops_end_us = 1e-3 * (last_loop_end - first_start);
    s.last_end_us = 1e-3 * (last_end - first_start);
    s.summing_blocks = static_cast<int>(sum.size());
    s.store_us = median_of_values(store);
    s.arrive_us = median_of_values(arrive);
    s.sum_us = median_of_values(sum);
    return s;
}

std::string describe(const TimelineSummary& s) {
    char line[512];
    const std::string per_sm = s.fewest_blocks_per_sm == s.most_blocks_per_sm
                                   ? std::to_string(s.most_blocks_per_sm)
                                   : std::to_string(s.fewest_blocks_per_sm) + " to " + std::to_string(s.most_blocks_per_sm);
    std::snprintf(line, sizeof line,
                  "%d blocks on %d SMs (%s each); main loops end by %.1f us, the last block at %.1f us; "
                  "kernel %.1f us (event)",
                  s.blocks, s.sms, per_sm.c_str(), s.loops_end_us, s.last_end_us, s.event_us);
    std::string out = line;
    if (s.summing_blocks > 0) {
        std::snprintf(line, sizeof line,
                      "\nsplit-K, the %d blocks that summed their tile (medians): partial stored %.2f us after their "
                      "loop, counted in %.2f us later, summed and wrote C in %.2f us",
                      s.summing_blocks, s.store_us, s.arrive_us, s.sum_us);
        out += line;
    }
    return out;
}

}  // namespace sgemm
