#include "tuner/search.h"

#include <algorithm>
#include <random>

#include "src/util/error.h"
#include "tuner/cost_model.h"

namespace sgemm {

Strategy parse_strategy(const std::string& text) {
    if (text == "model") return Strategy::Model;
    if (text == "exhaustive") return Strategy::Exhaustive;
    if (text == "random") return Strategy::Random;
    throw Error("unknown search strategy '" + text + "': choose model, exhaustive or random");
}

std::string to_string(Strategy strategy) {
    switch (strategy) {
        case Strategy::Model: return "model";
        case Strategy::Exhaustive: return "exhaustive";
        case Strategy::Random: return "random";
    }
    return "?";
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
            chosen = rank_by_cost(all, shape, device);
            chosen.resize(std::min<std::size_t>(chosen.size(), static_cast<std::size_t>(plan.top_k)));
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
