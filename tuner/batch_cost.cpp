#include "tuner/batch_cost.h"

namespace sgemm {
namespace {

// The same weight and layouts; the alignment class is left out, as it may differ with M
// alone (a transposed A of one row has a leading dimension of 1).
bool same_weights(const ShapeKey& a, const ShapeKey& b) {
    return a.N == b.N && a.K == b.K && a.trans_a == b.trans_a && a.trans_b == b.trans_b && a.precision == b.precision;
}

}  // namespace

std::vector<std::optional<double>> time_over_cublas_batch1(const std::vector<ShapeOutcome>& outcomes) {
    std::vector<std::optional<double>> out(outcomes.size());
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const ShapeKey& key = outcomes[i].row.key;
        if (key.M == 1) continue;
        for (const ShapeOutcome& batch1 : outcomes)
            if (batch1.row.key.M == 1 && same_weights(batch1.row.key, key) && batch1.winner.cublas_ms > 0) {
                out[i] = outcomes[i].winner.ms / batch1.winner.cublas_ms;
                break;
            }
    }
    return out;
}

}  // namespace sgemm
