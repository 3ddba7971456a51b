#include "db/selection.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace sgemm {

namespace {

double log_distance(int a, int b) { return std::fabs(std::log2(static_cast<double>(a)) - std::log2(b)); }

// Rule 2's order, as a tuple compared lexicographically.
std::tuple<double, double, int, int, int> nearness(const ShapeKey& to, const ShapeKey& s) {
    return {log_distance(s.M, to.M), log_distance(s.N, to.N) + log_distance(s.K, to.K), s.M, s.N, s.K};
}

// How far in M rule 2 reaches: a factor of 2. A skinny kernel tuned for one batch can run
// another batch far slower than cuBLAS (on the H200 a batch-8 decode tile at batch 32 ran
// 0.49-0.58x of cuBLAS, docs/RESULTS.md), so past that the fallback serves.
constexpr double kNearestReachInLog2M = 1.0;

std::string describe_winner(const Winner& w) {
    char times[96];
    std::snprintf(times, sizeof times, "%.4f ms, %.2fx cuBLAS", w.ms, w.cublas_ms / w.ms);
    return w.kernel.description + " (" + times + ")";
}

}  // namespace

std::vector<const Winner*> nearest_candidates(const std::vector<Winner>& winners, const ShapeKey& shape) {
    std::vector<const Winner*> out;
    for (const Winner& w : winners)
        if (w.shape.trans_a == shape.trans_a && w.shape.trans_b == shape.trans_b &&
            w.shape.precision == shape.precision && w.shape.alignment == shape.alignment)
            out.push_back(&w);
    std::sort(out.begin(), out.end(),
              [&](const Winner* a, const Winner* b) { return nearness(shape, a->shape) < nearness(shape, b->shape); });
    return out;
}

int largest_m_served(const std::vector<Winner>& winners, const Winner& w) {
    const long long own = w.shape.M;
    long long largest = static_cast<long long>(own * std::exp2(kNearestReachInLog2M));
    for (const Winner* other : nearest_candidates(winners, w.shape)) {
        if (other->shape.M <= own) continue;
        // Up to the geometric mean of the two Ms, w is at least as near in log2 M, and at its
        // own N and K it wins a tie (distance 0 in N+K, or the smaller shape).
        long long mean = static_cast<long long>(std::sqrt(static_cast<double>(own * other->shape.M)));
        while (mean * mean > own * other->shape.M) --mean;
        while ((mean + 1) * (mean + 1) <= own * other->shape.M) ++mean;
        largest = std::min(largest, mean);
    }
    return static_cast<int>(std::min<long long>(largest, INT_MAX));
}

Selection select_kernel(const std::vector<Winner>& winners, const ShapeKey& shape, const CannotRun& cannot_run) {
    for (const Winner& w : winners)
        if (w.shape == shape)
            return {SelectionKind::Exact, &w,
                    "exact winner, tuned for this shape at " + w.tuned_at + ": " + describe_winner(w)};

    const std::string family = shape.transposes() + " " + to_string(shape.precision) + " align" +
                               std::to_string(shape.alignment);
    const std::vector<const Winner*> candidates = nearest_candidates(winners, shape);
    std::string passed_over, out_of_reach;
    for (const Winner* w : candidates) {
        if (log_distance(w->shape.M, shape.M) > kNearestReachInLog2M) {
            // The candidates come nearest in M first: none further on is nearer.
            out_of_reach = "; the nearest tuned M beyond those is " + std::to_string(w->shape.M) +
                           ", more than a factor of 2 from " + std::to_string(shape.M);
            break;
        }
        const std::string why_not = cannot_run ? cannot_run(*w, shape) : "";
        if (!why_not.empty()) {
            passed_over += "; passed over " + w->shape.to_string() + " (" + w->kernel.description + "): " + why_not;
            continue;
        }
        char distance[96];
        std::snprintf(distance, sizeof distance, "log2 distance %.2f in M, %.2f in N+K",
                      log_distance(w->shape.M, shape.M),
                      log_distance(w->shape.N, shape.N) + log_distance(w->shape.K, shape.K));
        return {SelectionKind::Nearest, w,
                "no winner for this shape; the nearest tuned shape with " + family + " is " + w->shape.to_string() +
                    " (" + distance + "), whose winner is " + describe_winner(*w) + passed_over};
    }
    if (winners.empty())  // the device's winners of the call's precision in use here: none
        return {SelectionKind::Fallback, nullptr,
                "no winner for this shape: the device has no " + to_string(shape.precision) + " winners in use"};
    if (candidates.empty())
        return {SelectionKind::Fallback, nullptr,
                "no winner for this shape, and none of the device's " + std::to_string(winners.size()) +
                    " winners has " + family};
    if (passed_over.empty())
        return {SelectionKind::Fallback, nullptr,
                "no winner for this shape, and no winner with " + family + " within a factor of 2 in M: the nearest "
                "tuned M is " + std::to_string(candidates.front()->shape.M) + ", and M is " + std::to_string(shape.M)};
    return {SelectionKind::Fallback, nullptr,
            "no winner for this shape, and no winner with " + family + " within a factor of 2 in M can run it" +
                passed_over + out_of_reach};
}

}  // namespace sgemm
