#include "db/selection.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace sgemm {

namespace {

// A distance in log2 space, |log2 a - log2 b|, kept exact as the ratio larger / smaller so
// that the rule's comparisons (nearer, a tie, within a factor of 2) are not decided by
// rounding: in doubles, M=20 came out more than a factor of 2 from M=10, and of M=16 and
// M=25 the larger looked nearer to M=20. A sum of distances is a product of ratios.
struct LogRatio {
    unsigned __int128 larger = 1, smaller = 1;

    static LogRatio between(int a, int b) {
        return {static_cast<unsigned __int128>(std::max(a, b)), static_cast<unsigned __int128>(std::min(a, b))};
    }
    LogRatio operator+(const LogRatio& o) const { return {larger * o.larger, smaller * o.smaller}; }
    // Products of two ratios of ints, and each side of a comparison of two such, stay below
    // 2^124.
    bool operator<(const LogRatio& o) const { return larger * o.smaller < o.larger * smaller; }
    bool operator==(const LogRatio& o) const { return larger * o.smaller == o.larger * smaller; }
    double log2() const { return std::log2(static_cast<double>(larger)) - std::log2(static_cast<double>(smaller)); }
};

// Rule 2's order: nearest in M, then in N and K together, then the smaller shape.
bool nearer(const ShapeKey& to, const ShapeKey& a, const ShapeKey& b) {
    const LogRatio am = LogRatio::between(a.M, to.M), bm = LogRatio::between(b.M, to.M);
    if (!(am == bm)) return am < bm;
    const LogRatio ank = LogRatio::between(a.N, to.N) + LogRatio::between(a.K, to.K);
    const LogRatio bnk = LogRatio::between(b.N, to.N) + LogRatio::between(b.K, to.K);
    if (!(ank == bnk)) return ank < bnk;
    return std::tie(a.M, a.N, a.K) < std::tie(b.M, b.N, b.K);
}

// How far in M rule 2 reaches: a factor of 2. A skinny kernel tuned for one batch can run
// another batch far slower than cuBLAS (on the H200 a batch-8 decode tile at batch 32 ran
// 0.49-0.58x of cuBLAS, docs/RESULTS.md), so past that the fallback serves.
// N and K have no such reach: the Llama-3-8B decode winners, each serving the shapes it is
// nearest to from 1/8 to 2 times its N and K, ran 0.92-2.58x cuBLAS at M = 1, 8 and 32 (36
// shapes; 30 at 1.0x or more; docs/RESULTS.md, fifty-ninth session), and a kernel that cannot
// run a far shape (too much shared memory at its K) is passed over anyway.
constexpr int kNearestReachInM = 2;

bool within_reach(int tuned_m, int m) {
    return static_cast<long long>(std::max(tuned_m, m)) <= static_cast<long long>(kNearestReachInM) * std::min(tuned_m, m);
}

bool same_class(const ShapeKey& a, const ShapeKey& b) {
    return a.trans_a == b.trans_a && a.trans_b == b.trans_b && a.precision == b.precision && a.alignment == b.alignment;
}

std::string describe_winner(const Winner& w) {
    char times[96];
    std::snprintf(times, sizeof times, "%.4f ms, %.2fx cuBLAS", w.ms, w.cublas_ms / w.ms);
    return w.kernel.description + " (" + times + ")";
}

}  // namespace

std::vector<const Winner*> nearest_candidates(const std::vector<Winner>& winners, const ShapeKey& shape) {
    std::vector<const Winner*> out;
    for (const Winner& w : winners)
        if (same_class(w.shape, shape)) out.push_back(&w);
    std::sort(out.begin(), out.end(),
              [&](const Winner* a, const Winner* b) { return nearer(shape, a->shape, b->shape); });
    return out;
}

int largest_m_served(const std::vector<Winner>& winners, const Winner& w, const CannotRun& cannot_run) {
    const long long own = w.shape.M;
    long long largest = std::min<long long>(kNearestReachInM * own, INT_MAX);
    for (const Winner& other : winners) {
        if (other.shape.M <= own || !same_class(other.shape, w.shape)) continue;
        // A call of w's N and K at M is nearer w while M / own < other / M, and a tie goes to
        // w (no farther in N and K, and the smaller shape): up to the geometric mean.
        const long long product = own * other.shape.M;
        long long mean = static_cast<long long>(std::sqrt(static_cast<double>(product)));
        while (mean * mean > product) --mean;
        while ((mean + 1) * (mean + 1) <= product) ++mean;
        if (mean >= largest) continue;
        // Past the mean the other is chosen only where it can run w's N and K; where it cannot
        // it is passed over, and w serves on.
        ShapeKey past = w.shape;
        past.M = static_cast<int>(mean + 1);
        if (cannot_run && !cannot_run(other, past).empty()) continue;
        largest = mean;
    }
    return static_cast<int>(largest);
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
        if (!within_reach(w->shape.M, shape.M)) {
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
                      LogRatio::between(w->shape.M, shape.M).log2(),
                      (LogRatio::between(w->shape.N, shape.N) + LogRatio::between(w->shape.K, shape.K)).log2());
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
