// How a kernel's output is judged against a reference (cuBLAS, or fp64 later).
//
// The test is per element. For every element we know a bound on its magnitude,
//     bound_ij = |alpha| * (|A| |B|)_ij + |beta| * |C0_ij|,
// and the scaled error |out_ij - ref_ij| / bound_ij must stay under
//     tolerance(K) = u * (2 * log2(K) + 32),     u = 2^-24 (fp32 unit roundoff).
// Why this form: the operands are always the tuner's own, drawn uniformly from (-1, 1)
// (GemmProblem), so the products are zero-mean and a sum's partial sums random-walk. The
// rounding error of any summation order is then a few u times the bound, at any K: on the
// H200 the largest scaled error of 41 correct candidates of all four tuned families, on 9
// shapes with K from 1024 to 65536, was 6.4 u against cuBLAS and 5.9 u against fp64
// (docs/RESULTS.md, forty-seventh session). The tolerance leaves a margin of 5 or more over
// that, growing slowly with K for sums of other structures (more split-K slices, trees).
// The worst case of adversarial data, about 2 K u, does not arise on these operands, and a
// bound that grows like it passes real faults. Here a product never added fails up to K of
// about a million (it costs about 4 |a b| / K of the bound).
// A rounding coarser than fp32's in every product, such as inputs rounded to TF32 (10 bits
// of mantissa, as tensor cores read them), is caught by the root mean square of the scaled
// errors over all elements, which must stay under
//     rms_tolerance = max(4 u, tolerance(K) / sqrt(elements judged)).
// Correct fp32 sums give about 0.4 u at any K, in order or split, in a CPU simulation (so
// about 0.6 u against cuBLAS, whose own error counts too; on the H200 no kernel of the GPU
// tests, nor any of 2,601 candidates of a whole decode tune, failed the bound: docs/RESULTS.md,
// forty-ninth session). TF32 inputs give about 6000 u / sqrt(K): 24 u at K = 65536,
// and still 4 u at K of about two million, where the max alone passes them above K of about
// 40000. The term tolerance(K) / sqrt(n), the root mean square of one element at the
// tolerance among n exact ones, keeps a small output's few elements from failing on one
// unlucky rounding: on 16 elements it is a quarter of the tolerance.
// NaN or Inf anywhere fails.
// The relative Frobenius error ||out - ref|| / ||ref|| is reported as well.
// A kernel must also write nothing outside C's M x N elements: GemmProblem fills guards
// around the output and the padding columns of a leading dimension longer than N, and
// counts what changed there (outside_writes). In an engine C is often a view into a larger
// buffer, whose neighbouring values such a write would corrupt. Likewise for a guard after
// the workspace a kernel declares (dispatch allocates no more than its winners declare); and
// every kernel must leave the workspace's tile counters zero, or the next split-K launch on
// it goes wrong.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace sgemm {

double unit_roundoff_fp32();
double tolerance_for_k(int K);
// The bound on the root mean square of the scaled errors of `elements` judged elements.
double rms_tolerance_for(int K, std::size_t elements);

struct Accuracy {
    double max_abs_err = 0.0;
    double rel_err_norm = 0.0;
    double max_scaled_err = 0.0;  // max over elements of |err| / bound
    double tolerance = 0.0;
    double rms_scaled_err = 0.0;  // root mean square over the finite elements of |err| / bound
    double rms_tolerance = 0.0;
    std::size_t nonfinite = 0;    // elements of the output that are NaN or Inf
    // Elements whose reference or bound is NaN or Inf: no output can be judged against them
    // (every comparison with NaN is false), so the check fails rather than pass them.
    std::size_t reference_nonfinite = 0;
    std::size_t worst_row = 0, worst_col = 0;
    std::size_t outside_writes = 0;  // floats outside C's M x N elements that the run changed
    std::string first_outside;       // where the first of them lies, in words
    std::size_t workspace_declared = 0;  // bytes of workspace the kernel says it uses
    std::size_t workspace_overrun = 0;   // 4-byte words of the guard after them that it changed
    std::size_t counters_left = 0;       // split-K tile counters the run left non-zero

    bool ok() const {
        return outside_writes == 0 && workspace_overrun == 0 && counters_left == 0 && reference_nonfinite == 0 &&
               nonfinite == 0 && max_scaled_err <= tolerance && rms_scaled_err <= rms_tolerance;
    }
    // "ok" or a sentence naming the first of: a write outside C, a write past the workspace,
    // counters left non-zero, a reference that cannot judge, the worst element, the root
    // mean square.
    std::string verdict() const;
};

// A run at alpha and beta is judged against alpha * product + beta * c0, element by element,
// with the bound |alpha| * abs_product + |beta| * |c0| (products A B and |A| |B|), each
// formed in double as it is compared, so that no M x N matrix more is kept.
struct Reference {
    const std::vector<float>& product;
    const std::vector<float>& abs_product;
    const std::vector<float>& c0;
    double alpha = 1.0, beta = 0.0;
};

// out and the reference's matrices are M x N with leading dimension ld (row-major).
Accuracy compare_to_reference(const std::vector<float>& out, const Reference& ref, int M, int N, int ld, int K);

}  // namespace sgemm
