// Search strategies: which of a shape's candidates get compiled and timed, in what order.
//
//   model       (default) rank every candidate with the cost model; time the best top_k,
//               plus the winners of the nearest tuned shapes of this device that can run
//               this shape (the database's nearest-shape rule, db/selection.h).
//   exhaustive  every candidate of the pruned space.
//   random      `budget` candidates drawn uniformly (seeded, so a run can be repeated).
// max_candidates, when set, caps any strategy's list.
#pragma once
#include <cstdint>
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
};

std::vector<Candidate> choose_candidates(const std::vector<Candidate>& all, const ShapeKey& shape,
                                         const DeviceModel& device, const SearchPlan& plan,
                                         const std::vector<Candidate>& neighbour_winners);

}  // namespace sgemm
