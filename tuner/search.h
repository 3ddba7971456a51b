// Search strategies: which of a shape's candidates get compiled and timed, in what order.
//
//   model       (default) rank every candidate with the cost model; time the best top_k
//               (one candidate of each tie: same family, same estimate, both tiles of C
//               or both of C^T), plus the
//               winners of the nearest tuned shapes of this device that can run
//               this shape (the database's nearest-shape rule, db/selection.h), and the
//               next top_k where none of those could be timed (Refinement); then refine
//               (Refinement): from each of the refine_starts fastest, walk downhill by
//               one-step moves, refine_rounds batches of neighbours at most (the walks
//               step together, one batch for all), again from any of the
//               refine_starts fastest no walk has stood on, until there is none; then time
//               every split count (crossed with every count of groups of warps along k)
//               of the refine_starts fastest tiles, and walk again from any new fastest
//               the same way. The model knows the broad shape of the space; measurement
//               finds the exact spot.
//   exhaustive  every candidate of the pruned space.
//   random      `random_budget` candidates drawn uniformly (seeded, so a run can be repeated).
// max_candidates, when set, caps any strategy's list, and the tuner stops the model
// strategy's walks there too (tuner.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/candidates.h"
#include "tuner/device_model.h"

namespace sgemm {

enum class Strategy { Model, Exhaustive, Random };

// "model", "exhaustive" or "random"; anything else is an Error naming the choices.
Strategy parse_strategy(const std::string& text);
std::string to_string(Strategy strategy);

struct SearchPlan {
    Strategy strategy = Strategy::Model;
    int top_k = 8;
    int random_budget = 16;
    std::uint64_t seed = 1;
    int max_candidates = 0;  // 0: no cap
    int refine_starts = 3;   // model strategy only
    int refine_rounds = 3;
};

struct TimedCandidate {
    Candidate candidate;
    double ms;
};

// The candidates of `all` that differ from `from` in exactly one parameter, moved by one
// place in that parameter's list of values (any place for a split count), or that trade the
// values of a swappable pair of parameters (Family::swappable_params), or that move two
// parameters (no split count) by one place each where one of the two single moves leaves
// `all`: the step across an edge of the space that single moves cannot take.
std::vector<Candidate> one_step_neighbours(const Candidate& from, const std::vector<Candidate>& all);

std::vector<Candidate> choose_candidates(const std::vector<Candidate>& all, const ShapeKey& shape,
                                         const DeviceModel& device, const SearchPlan& plan,
                                         const std::vector<Candidate>& neighbour_winners);

// Hill climbing over measured times. Ask next() for a batch, time it, ask again with the
// times so far; an empty batch means done. Walks start from each of the `starts` fastest
// candidates timed so far that no walk has stood on, and step together: each batch holds
// the untried neighbours of every walk's point, so that the tuner compiles them in parallel
// (one walk's batch is a few binaries, fewer than the build jobs). Each walk moves to its
// fastest neighbour that beats its point and that no other walk moves to, and stops at a
// local minimum or after `rounds` batches of its neighbours (so `rounds` - 1 moves). When
// all have stopped, walks start again, until the `starts` fastest have all been stood on: a
// candidate met as a neighbour and among the fastest has neighbours of its own that were
// never timed (on the H200 at 4096^3, 256x128 tiles with BK 8 and 4 stages were met so,
// third fastest, and BK 16 from there was the best tile, 1.4% faster than where the walks
// had stopped). Then one batch holds the untried split counts of the `starts` fastest tiles
// timed by then (twins that differ only in ParamSpec::aligned_only count as one tile, the
// faster of them): a tile met on a walk without becoming its point has had only the split
// count it was met with, and split times are not monotonic (on the H200 a 1024^3 tile's
// best split count, 3, was met that way only in some runs). They share their tile's
// binaries (one on each side of 1 slice), so they cost timing and at most one compile per
// tile. The batch crosses them with every count of groups of warps along k
// (ParamSpec::k_groups), which trades against the split count: two more binaries per tile
// where the family allows more groups. Walks then start as before from any of the fastest
// that the batch brought in.
// A walk needs a timed start: while nothing has been timed (every candidate tried failed to
// compile, spilled, or computed a wrong result), a batch holds the model's next picks instead
// (choose_candidates without neighbour winners), at most kMorePicks times, even where
// plan.refine_starts is 0. They leave out every candidate that its family estimates to need
// as many registers as one that failed (Family::estimated_registers), unless that leaves
// none: the model ties a tile's BK, stage and split variants, so the next picks by rank alone
// are the failed tile again. (Any failure counts, though a spill is the likely one where
// picks share a tile; a wrong result from one tile says little of its neighbours.) On the H200 the
// first picks at 4096^3, and the 24 after them, are all one 16x8 thread tile, which ptxas
// gives 222-250 registers: were it to spill, the next picks are 8x8 tiles, where before the
// search ended with nothing timed and stored cuBLAS as the shape's winner.
class Refinement {
public:
    static constexpr int kMorePicks = 3;
    // starts and rounds come from plan.refine_starts and plan.refine_rounds, the number of
    // the next picks from plan.top_k.
    Refinement(std::vector<Candidate> all, const ShapeKey& shape, const DeviceModel& device, const SearchPlan& plan);
    std::vector<Candidate> next(const std::vector<TimedCandidate>& timed, const std::vector<Candidate>& tried);

private:
    std::vector<Candidate> all_;
    ShapeKey shape_;
    DeviceModel device_;
    SearchPlan plan_;  // walks from plan_.refine_starts points, plan_.refine_rounds batches each
    int picks_left_ = kMorePicks;
    struct Walk {
        Candidate at;                       // its current point
        int round;                          // batches of neighbours handed out so far
        std::vector<Candidate> neighbours;  // the point's neighbours in the last batch
    };
    std::vector<Walk> walks_;         // the walks in progress, stepping together
    std::vector<Candidate> centres_;  // every point a walk has stood on (its neighbours are timed)
    bool swept_ = false;  // the split sweep has been handed out
    // The `starts` fastest timed so far that no walk has stood on.
    std::vector<Candidate> unwalked_starts(const std::vector<TimedCandidate>& timed) const;
    std::vector<Candidate> split_sweep(const std::vector<TimedCandidate>& timed, const std::vector<Candidate>& tried) const;
    // The model's next picks where every one of `failed` failed: none of them, and none
    // estimated to need the registers of one of them in its family.
    std::vector<Candidate> next_picks(const std::vector<Candidate>& failed) const;
};

// The model strategy replayed on known timings: the best time it would reach, choosing
// and refining as above, when `measured` gives each candidate's time (nullopt for those
// that cannot be timed). This is how an exhaustive run judges the default strategy.
using MeasuredTime = std::function<std::optional<double>(const Candidate&)>;
std::optional<double> replay_model_search(const std::vector<Candidate>& all, const ShapeKey& shape,
                                          const DeviceModel& device, const SearchPlan& plan,
                                          const MeasuredTime& measured);

}  // namespace sgemm
