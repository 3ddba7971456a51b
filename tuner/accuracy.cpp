#include "tuner/accuracy.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "src/util/text.h"
#include "src/util/parallel_for.h"

namespace sgemm {

double unit_roundoff_fp32() { return std::ldexp(1.0, -24); }

double tolerance_for_k(int K) {
    return unit_roundoff_fp32() * (2.0 * std::log2(std::max(1.0, static_cast<double>(K))) + 32.0);
}

double rms_tolerance_for(int K, std::size_t elements) {
    const double floor = 4.0 * unit_roundoff_fp32();
    if (elements == 0) return floor;
    return std::max(floor, tolerance_for_k(K) / std::sqrt(static_cast<double>(elements)));
}

std::string Accuracy::verdict() const {
    if (ok()) return "ok";
    char buf[256];
    if (outside_writes)
        return "wrote " + count_of(outside_writes, "float", "floats") + " outside C, the first " + first_outside;
    if (workspace_overrun)
        return "wrote past the " + std::to_string(workspace_declared) + " bytes of workspace it declares: " +
               count_of(workspace_overrun, "word", "words") + " of the guard after them changed";
    if (counters_left)
        return "left " + count_of(counters_left, "tile counter", "tile counters") + " of the workspace non-zero";
    if (reference_nonfinite)
        return "the reference or its bound is NaN or Inf at " +
               count_of(reference_nonfinite, "element", "elements") + ", e.g. C[" + std::to_string(worst_row) + "][" +
               std::to_string(worst_col) + "]: nothing can be judged there";
    if (nonfinite)
        std::snprintf(buf, sizeof buf, "%zu elements are NaN or Inf, e.g. C[%zu][%zu]", nonfinite,
                      worst_row, worst_col);
    else if (max_scaled_err > tolerance)
        std::snprintf(buf, sizeof buf, "scaled error %.3g at C[%zu][%zu] exceeds the tolerance %.3g",
                      max_scaled_err, worst_row, worst_col, tolerance);
    else
        std::snprintf(buf, sizeof buf,
                      "the scaled errors' root mean square %.3g exceeds %.3g: every element is rounded more "
                      "coarsely than fp32 sums round (inputs rounded to TF32, say)",
                      rms_scaled_err, rms_tolerance);
    return buf;
}

namespace {

// Where an element lies, or nowhere yet.
struct Position {
    bool found = false;
    std::size_t row = 0, col = 0;
};

// One band of rows' share of the comparison. Bands are merged in row order, so the counts,
// the largest errors and the element named are one pass's over the rows whichever thread
// judged which band. The sums are added band by band, which rounds them otherwise than one
// pass did (by a few ulps), but alike on any machine: the bands depend on N alone.
struct BandJudgement {
    double max_abs_err = 0.0, max_scaled_err = 0.0;
    double err_sq = 0.0, ref_sq = 0.0, scaled_sq = 0.0;
    std::size_t judged = 0, nonfinite = 0, reference_nonfinite = 0;
    Position first_reference_nonfinite, first_nonfinite, largest_scaled;
};

BandJudgement judge_rows(const std::vector<float>& out, const Reference& ref, int first_row, int end_row, int N,
                         int ld) {
    BandJudgement b;
    for (int i = first_row; i < end_row; ++i) {
        for (int j = 0; j < N; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * ld + j;
            const double o = out[at], c0 = ref.c0[at];
            const double r = ref.alpha * ref.product[at] + ref.beta * c0;
            const double bound = std::fabs(ref.alpha) * ref.abs_product[at] + std::fabs(ref.beta) * std::fabs(c0);
            const Position here{true, static_cast<std::size_t>(i), static_cast<std::size_t>(j)};
            if (!std::isfinite(r) || !std::isfinite(bound)) {
                if (b.reference_nonfinite++ == 0) b.first_reference_nonfinite = here;
                continue;
            }
            if (!std::isfinite(o)) {
                if (b.nonfinite++ == 0) b.first_nonfinite = here;
                continue;
            }
            const double err = std::fabs(o - r);
            const double scaled = err / (bound + FLT_MIN);
            b.err_sq += err * err;
            b.ref_sq += r * r;
            b.scaled_sq += scaled * scaled;
            ++b.judged;
            b.max_abs_err = std::max(b.max_abs_err, err);
            if (!b.largest_scaled.found || scaled > b.max_scaled_err) {
                b.max_scaled_err = scaled;
                b.largest_scaled = here;
            }
        }
    }
    return b;
}

// Rows per band: about 64K elements, enough to pay for handing a band to a thread.
int rows_per_band(int N) { return std::max(1, (1 << 16) / std::max(1, N)); }

}  // namespace

Accuracy compare_to_reference(const std::vector<float>& out, const Reference& ref, int M, int N, int ld, int K) {
    // A check judges every candidate's output several times (tuner/candidate_check.h): at
    // 4096 x 4096 one pass takes about 50 ms on one core, so the bands share the cores.
    // In 64 bits: M of nearly 2^31 rows of one element would pass int in the last band.
    const std::int64_t band_rows = rows_per_band(N), rows = std::max(M, 0);
    std::vector<BandJudgement> judged(static_cast<std::size_t>((rows + band_rows - 1) / band_rows));
    parallel_for(judged.size(), [&](std::size_t first_band, std::size_t end_band) {
        for (std::size_t band = first_band; band < end_band; ++band) {
            const std::int64_t first_row = static_cast<std::int64_t>(band) * band_rows;
            judged[band] = judge_rows(out, ref, static_cast<int>(first_row),
                                      static_cast<int>(std::min(rows, first_row + band_rows)), N, ld);
        }
    });

    // Merged in row order. worst_row and worst_col name what verdict() names: the first
    // element whose reference is not finite, else the first output that is not, else the
    // first of the largest scaled errors.
    Accuracy a;
    a.tolerance = tolerance_for_k(K);
    double err_sq = 0.0, ref_sq = 0.0, scaled_sq = 0.0;
    std::size_t count = 0;
    Position first_reference_nonfinite, first_nonfinite, largest_scaled;
    for (const BandJudgement& b : judged) {
        err_sq += b.err_sq, ref_sq += b.ref_sq, scaled_sq += b.scaled_sq, count += b.judged;
        a.nonfinite += b.nonfinite;
        a.reference_nonfinite += b.reference_nonfinite;
        a.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
        if (!first_reference_nonfinite.found) first_reference_nonfinite = b.first_reference_nonfinite;
        if (!first_nonfinite.found) first_nonfinite = b.first_nonfinite;
        if (b.largest_scaled.found && (!largest_scaled.found || b.max_scaled_err > a.max_scaled_err)) {
            a.max_scaled_err = b.max_scaled_err;
            largest_scaled = b.largest_scaled;
        }
    }
    const Position& worst = first_reference_nonfinite.found ? first_reference_nonfinite
                            : first_nonfinite.found         ? first_nonfinite
                                                            : largest_scaled;
    a.worst_row = worst.row, a.worst_col = worst.col;
    a.rel_err_norm = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : std::sqrt(err_sq);
    a.rms_scaled_err = count ? std::sqrt(scaled_sq / static_cast<double>(count)) : 0.0;
    a.rms_tolerance = rms_tolerance_for(K, count);
    return a;
}

}  // namespace sgemm
