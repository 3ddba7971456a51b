#include "tuner/batch_cost.h"

namespace sgemm {
namespace {

// The same weight and layouts. The alignment class may differ with M alone (a transposed A
// of one row has a leading dimension of 1), so it is not required to match.
bool same_weights(const ShapeKey& a, const ShapeKey& b) {
    return a.N == b.N && a.K == b.K && a.trans_a == b.trans_a && a.trans_b == b.trans_b && a.precision == b.precision;
}

}  // namespace

std::vector<std::optional<double>> time_over_cublas_batch1(const std::vector<ShapeOutcome>& outcomes) {
    std::vector<std::optional<double>> out(outcomes.size());
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const ShapeKey& key = outcomes[i].row.key;
        if (key.M == 1) continue;
        // The first batch-1 row of the same weights, one of the same alignment class before
        // any other: a file may hold the batch-1 shape both packed and on misaligned operands
        // (align 4), and cuBLAS's time on the latter would flatter a packed batch.
        const ShapeOutcome* reference = nullptr;
        for (const ShapeOutcome& batch1 : outcomes) {
            const ShapeKey& b = batch1.row.key;
            if (b.M != 1 || !same_weights(b, key) || batch1.winner.cublas_ms <= 0) continue;
            if (!reference || (b.alignment == key.alignment && reference->row.key.alignment != key.alignment))
                reference = &batch1;
        }
        if (reference) out[i] = outcomes[i].winner.ms / reference->winner.cublas_ms;
    }
    return out;
}

}  // namespace sgemm
