#include "tuner/search.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <random>
#include <set>

#include "src/util/error.h"
#include "src/util/text.h"
#include "tuner/cost_model.h"

namespace sgemm {

Strategy parse_strategy(const std::string& text) {
    const std::string name = chosen_word(text);  // as --families reads its names
    if (name == "model") return Strategy::Model;
    if (name == "exhaustive") return Strategy::Exhaustive;
    if (name == "random") return Strategy::Random;
    throw Error("unknown search strategy " + single_quoted(text) + ": choose model, exhaustive or random");
}

std::string to_string(Strategy strategy) {
    switch (strategy) {
        case Strategy::Model: return "model";
        case Strategy::Exhaustive: return "exhaustive";
        case Strategy::Random: return "random";
    }
    return "?";
}

namespace {
// Whether b is a with the values of one of `pairs` (indices of parameters) traded, and
// nothing else changed.
using IndexPairs = std::vector<std::pair<std::size_t, std::size_t>>;

bool swapped_pair(const Candidate& a, const Candidate& b, const IndexPairs& pairs) {
    for (const auto& [i, j] : pairs) {
        if (a.values[i] == a.values[j] || b.values[i] != a.values[j] || b.values[j] != a.values[i]) continue;
        bool rest_equal = true;
        for (std::size_t k = 0; k < a.values.size() && rest_equal; ++k)
            rest_equal = k == i || k == j || a.values[k] == b.values[k];
        if (rest_equal) return true;
    }
    return false;
}

// Whether c, which moves parameters i and j of `from` by one step each (no split count),
// can only be reached through a configuration outside the space: one of the two single
// moves is not in it. A walk by single moves stops at such an edge. On the H200 the NT
// tune of 8x28672x4096 stopped at decode BN=64 KW=16 RING=6 (0.1395 ms): at BN=128 a ring
// of 6 leaves no room for A, and RING=3 alone was slower; sgemm-bench timed BN=128 with
// RING=3, both moves at once, at 0.1289 ms.
bool crosses_the_edge(const Candidate& from, const Candidate& c, std::size_t i, std::size_t j,
                      const std::set<ParamValues>& space) {
    const std::vector<ParamSpec>& params = from.family->params;
    if (params[i].split_count || params[j].split_count) return false;  // the split sweep covers them
    ParamValues only_i = from.values, only_j = from.values;
    only_i[i] = c.values[i];
    only_j[j] = c.values[j];
    return space.count(only_i) == 0 || space.count(only_j) == 0;
}
}  // namespace

std::vector<Candidate> one_step_neighbours(const Candidate& from, const std::vector<Candidate>& all) {
    std::vector<Candidate> out;
    const std::vector<ParamSpec>& params = from.family->params;
    IndexPairs pairs;
    for (const auto& [first, second] : from.family->swappable_params)
        pairs.emplace_back(from.family->param_index(first), from.family->param_index(second));
    std::set<ParamValues> space;
    for (const Candidate& c : all)
        if (c.family == from.family) space.insert(c.values);
    for (const Candidate& c : all) {
        if (c.family != from.family) continue;
        std::vector<std::size_t> moved;
        bool steps = true;
        for (std::size_t i = 0; i < params.size() && steps; ++i) {
            if (c.values[i] == from.values[i]) continue;
            // Every other split count is one step away: configurations that differ only in it
            // share a binary, so timing one costs no compile, and times are not monotonic in
            // it (1024^3 on the H200, one warptile tile: 3 slices 0.0588 ms, 4 0.0731, 6 0.0651).
            const auto& list = params[i].values;
            const auto a = std::find(list.begin(), list.end(), c.values[i]);
            const auto b = std::find(list.begin(), list.end(), from.values[i]);
            steps = params[i].split_count || std::abs(static_cast<int>(a - b)) == 1;
            moved.push_back(i);
        }
        if ((steps && moved.size() == 1) || swapped_pair(from, c, pairs) ||
            (steps && moved.size() == 2 && crosses_the_edge(from, c, moved[0], moved[1], space)))
            out.push_back(c);
    }
    return out;
}

std::vector<Candidate> choose_candidates(const std::vector<Candidate>& all, const ShapeKey& shape,
                                         const DeviceModel& device, const SearchPlan& plan,
                                         const std::vector<Candidate>& neighbour_winners) {
    std::vector<Candidate> chosen;
    switch (plan.strategy) {
        case Strategy::Exhaustive:
            chosen = all;
            break;
        case Strategy::Random: {
            chosen = all;
            std::mt19937_64 rng(plan.seed);
            std::shuffle(chosen.begin(), chosen.end(), rng);
            chosen.resize(std::min<std::size_t>(chosen.size(), static_cast<std::size_t>(plan.random_budget)));
            break;
        }
        case Strategy::Model: {
            // Candidates with the same estimate mostly differ only where the model sees no
            // difference (BK, STAGES and the like): time the first of each such tie and leave
            // its variants to refinement, so top_k timings try about top_k estimates. A tile
            // of C and a tile of C^T are never one tie: on large NN squares the model rates
            // 128x256 tiles of C and 256x128 tiles of C^T alike by construction, and with
            // 16x8 thread tiles the H200 ran the second at 98% of cuBLAS, the first at 93-96%.
            std::vector<double> chosen_costs;
            for (const Candidate& c : rank_by_cost(all, shape, device)) {
                if (chosen.size() == static_cast<std::size_t>(plan.top_k)) break;
                const double cost = estimate_cost(c, shape, device).seconds;
                bool tie = false;
                for (std::size_t i = 0; i < chosen.size() && !tie; ++i)
                    tie = chosen[i].family == c.family && chosen_costs[i] == cost && same_output_tiling(chosen[i], c);
                if (tie) continue;
                chosen.push_back(c);
                chosen_costs.push_back(cost);
            }
            for (const Candidate& n : neighbour_winners)
                if (std::find(all.begin(), all.end(), n) != all.end() &&
                    std::find(chosen.begin(), chosen.end(), n) == chosen.end())
                    chosen.push_back(n);
            break;
        }
    }
    if (plan.max_candidates > 0 && chosen.size() > static_cast<std::size_t>(plan.max_candidates))
        chosen.resize(static_cast<std::size_t>(plan.max_candidates));
    return chosen;
}

}  // namespace sgemm

namespace sgemm {

namespace {
double time_of(const std::vector<TimedCandidate>& timed, const Candidate& c) {
    for (const TimedCandidate& t : timed)
        if (t.candidate == c) return t.ms;
    return std::numeric_limits<double>::infinity();
}

// The timings, fastest first (ties in the order they were timed).
std::vector<TimedCandidate> fastest_first(std::vector<TimedCandidate> timed) {
    std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.ms < b.ms; });
    return timed;
}

// Whether a and b, of one family, agree in every parameter that `free` does not name.
template <class Free>
bool agree_except(const Candidate& a, const Candidate& b, Free free) {
    if (a.family != b.family) return false;
    for (std::size_t i = 0; i < a.values.size(); ++i)
        if (!free(a.family->params[i]) && a.values[i] != b.values[i]) return false;
    return true;
}

// Whether a and b differ at most in how they spread k: the split count (which needs one
// binary on each side of 1), the groups of warps along k inside a block (a binary for
// each count) and how the slices are summed (in the kernel, in a sum pass, by atomics or by turns on C). These trade
// against each other, so a walk that changes one at a time can miss the best pair: on the
// H200 at 1024^3, 64x128 tiles took 0.0603 ms with 3 slices and 1 group, 0.0738 with 3
// slices and 2 groups, 0.0661 with neither and 0.0591 with 2 groups and no slices; a walk
// at SPLITS 1 cannot step to the sum pass, which needs slices.
bool spreads_k(const ParamSpec& p) { return p.split_count || p.k_groups || p.sum_pass; }

bool same_tile(const Candidate& a, const Candidate& b) { return agree_except(a, b, spreads_k); }

// Whether a and b are one tile but for how they spread k and whether they drop the copies
// for less aligned operands (ParamSpec::aligned_only). Such twins often time second and first,
// and the sweep should spend its tiles on different ones.
bool twin_tiles(const Candidate& a, const Candidate& b) {
    return agree_except(a, b, [](const ParamSpec& p) { return spreads_k(p) || p.aligned_only; });
}
}  // namespace

Refinement::Refinement(std::vector<Candidate> all, const ShapeKey& shape, const DeviceModel& device,
                       const SearchPlan& plan)
    : all_(std::move(all)), shape_(shape), device_(device), plan_(plan) {
    plan_.strategy = Strategy::Model;
    plan_.max_candidates = 0;  // the tuner caps what it times itself
}

std::vector<Candidate> Refinement::next_picks(const std::vector<Candidate>& failed) const {
    std::set<std::pair<const Family*, ParamValues>> done;
    std::set<std::pair<const Family*, int>> failed_registers;
    for (const Candidate& c : failed) {
        done.emplace(c.family, c.values);
        if (c.family->estimated_registers) failed_registers.emplace(c.family, c.family->estimated_registers(c.values));
    }
    std::vector<Candidate> untried, others;
    for (const Candidate& c : all_) {
        if (done.count({c.family, c.values}) != 0) continue;
        untried.push_back(c);
        if (!c.family->estimated_registers ||
            failed_registers.count({c.family, c.family->estimated_registers(c.values)}) == 0)
            others.push_back(c);
    }
    // Where every untried candidate needs the registers of a failed one, they are all there is.
    return choose_candidates(others.empty() ? untried : others, shape_, device_, plan_, {});
}

std::vector<Candidate> Refinement::split_sweep(const std::vector<TimedCandidate>& timed,
                                               const std::vector<Candidate>& tried) const {
    const std::vector<TimedCandidate> order = fastest_first(timed);
    std::vector<Candidate> tiles, batch;
    for (const TimedCandidate& t : order) {
        if (static_cast<int>(tiles.size()) == plan_.refine_starts) break;
        if (std::none_of(tiles.begin(), tiles.end(), [&](const Candidate& c) { return twin_tiles(c, t.candidate); }))
            tiles.push_back(t.candidate);  // the faster twin
    }
    for (const Candidate& c : all_)
        if (std::any_of(tiles.begin(), tiles.end(), [&](const Candidate& t) { return same_tile(c, t); }) &&
            std::find(tried.begin(), tried.end(), c) == tried.end())
            batch.push_back(c);
    return batch;
}

std::vector<Candidate> Refinement::unwalked_starts(const std::vector<TimedCandidate>& timed) const {
    const std::vector<TimedCandidate> order = fastest_first(timed);
    std::vector<Candidate> out;
    for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < plan_.refine_starts; ++i)
        if (std::find(centres_.begin(), centres_.end(), order[i].candidate) == centres_.end())
            out.push_back(order[i].candidate);
    return out;
}

std::vector<Candidate> Refinement::next(const std::vector<TimedCandidate>& timed, const std::vector<Candidate>& tried) {
    if (timed.empty()) {
        if (picks_left_ == 0) return {};
        --picks_left_;
        return next_picks(tried);
    }
    while (true) {
        // Move each walk to the fastest of its last neighbours that beat its point and that no
        // other walk moves to: walks that met on one point would step alike from then on, so
        // the later one takes its next best way down (the one it took when walks went one at
        // a time, and the first walk's neighbours were tried before the second's were chosen).
        // A walk with no faster neighbour left, or out of rounds, ends.
        std::vector<Walk> moved;
        for (const Walk& w : walks_) {
            if (w.round >= plan_.refine_rounds) continue;
            std::optional<Candidate> better;
            double best = time_of(timed, w.at);
            for (const Candidate& c : w.neighbours) {
                const bool taken = std::any_of(moved.begin(), moved.end(), [&](const Walk& m) { return m.at == c; });
                if (!taken && time_of(timed, c) < best) best = time_of(timed, c), better = c;
            }
            if (better) moved.push_back({*better, w.round, {}});
        }
        walks_ = std::move(moved);
        if (walks_.empty()) {
            for (const Candidate& start : unwalked_starts(timed)) walks_.push_back({start, 0, {}});
            if (walks_.empty()) {
                if (swept_) return {};
                swept_ = true;
                const std::vector<Candidate> sweep = split_sweep(timed, tried);
                if (!sweep.empty()) return sweep;
                continue;
            }
        }
        // One batch holds the untried neighbours of every walk's point.
        std::vector<Candidate> batch;
        std::vector<Walk> stepping;
        for (Walk& w : walks_) {
            if (std::find(centres_.begin(), centres_.end(), w.at) == centres_.end()) centres_.push_back(w.at);
            for (const Candidate& n : one_step_neighbours(w.at, all_))
                if (std::find(tried.begin(), tried.end(), n) == tried.end()) {
                    w.neighbours.push_back(n);
                    if (std::find(batch.begin(), batch.end(), n) == batch.end()) batch.push_back(n);
                }
            ++w.round;
            // With nothing new around its point, a walk ends.
            if (!w.neighbours.empty()) stepping.push_back(std::move(w));
        }
        walks_ = std::move(stepping);
        if (!batch.empty()) return batch;
    }
}

std::optional<double> replay_model_search(const std::vector<Candidate>& all, const ShapeKey& shape,
                                          const DeviceModel& device, const SearchPlan& plan,
                                          const MeasuredTime& measured) {
    SearchPlan model_plan = plan;
    model_plan.strategy = Strategy::Model;
    model_plan.max_candidates = 0;
    std::vector<TimedCandidate> timed;
    std::vector<Candidate> tried;
    auto consider = [&](const Candidate& c) {
        tried.push_back(c);
        if (const std::optional<double> t = measured(c)) timed.push_back({c, *t});
    };
    for (const Candidate& c : choose_candidates(all, shape, device, model_plan, {})) consider(c);
    Refinement refinement(all, shape, device, model_plan);
    for (std::vector<Candidate> batch; !(batch = refinement.next(timed, tried)).empty();)
        for (const Candidate& c : batch) consider(c);
    std::optional<double> best;
    for (const TimedCandidate& t : timed)
        if (!best || t.ms < *best) best = t.ms;
    return best;
}

}  // namespace sgemm
