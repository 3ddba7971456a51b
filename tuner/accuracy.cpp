#include "tuner/accuracy.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "src/util/text.h"

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

Accuracy compare_to_reference(const std::vector<float>& out, const Reference& ref, int M, int N, int ld, int K) {
    Accuracy a;
    a.tolerance = tolerance_for_k(K);
    double err_sq = 0.0, ref_sq = 0.0, scaled_sq = 0.0;
    std::size_t judged = 0;
    // worst_row and worst_col name what verdict() names: the first element whose reference
    // is not finite, else the first output that is not, else the largest scaled error.
    bool have_nonfinite = false;
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * ld + j;
            const double o = out[at], c0 = ref.c0[at];
            const double r = ref.alpha * ref.product[at] + ref.beta * c0;
            const double bound = std::fabs(ref.alpha) * ref.abs_product[at] + std::fabs(ref.beta) * std::fabs(c0);
            if (!std::isfinite(r) || !std::isfinite(bound)) {
                if (a.reference_nonfinite++ == 0) a.worst_row = i, a.worst_col = j;
                have_nonfinite = true;
                continue;
            }
            if (!std::isfinite(o)) {
                if (!have_nonfinite) a.worst_row = i, a.worst_col = j;
                have_nonfinite = true;
                ++a.nonfinite;
                continue;
            }
            const double err = std::fabs(o - r);
            const double scaled = err / (bound + FLT_MIN);
            err_sq += err * err;
            ref_sq += r * r;
            scaled_sq += scaled * scaled;
            ++judged;
            if (err > a.max_abs_err) a.max_abs_err = err;
            if (scaled > a.max_scaled_err) {
                a.max_scaled_err = scaled;
                if (!have_nonfinite) a.worst_row = i, a.worst_col = j;
            }
        }
    }
    a.rel_err_norm = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : std::sqrt(err_sq);
    a.rms_scaled_err = judged ? std::sqrt(scaled_sq / static_cast<double>(judged)) : 0.0;
    a.rms_tolerance = rms_tolerance_for(K, judged);
    return a;
}

}  // namespace sgemm
