// One GEMM problem on the device with everything needed to judge a kernel on it: random
// operands, the reference result (cuBLAS), the per-element error bound, and an output
// buffer that is poisoned before every checked run, with guards around it.
#pragma once
#include <cstdint>
#include <vector>

#include "src/cuda/cublas_handle.h"
#include "src/cuda/device_buffer.h"
#include "tuner/accuracy.h"

namespace sgemm {

struct ProblemSpec {
    int M = 1, N = 1, K = 1;
    float alpha = 1.0f, beta = 0.0f;
    // How A and B are stored (sgemm_common.cuh): A as K x M when trans_a, B as N x K when
    // trans_b; row-major M x K and K x N otherwise.
    bool trans_a = false, trans_b = false;
    int lda = 0, ldb = 0, ldc = 0;  // 0: tight, the stored row length
    // A, B and C each start this many floats (0 to 3) past a 256-byte boundary: with leading
    // dimensions that are multiples of 4, 1 or 3 make the call's alignment class 4 and 2
    // makes it 8 (db/shape_key.h), as in a call on a view into a larger matrix.
    int offset_floats = 0;
    std::uint64_t seed = 1;
    // Compute the reference in fp64 (cuBLAS DGEMM on the same operands) instead of cuBLAS's
    // fp32 result: the judge is then exact to fp32 rounding, not another fp32 GEMM.
    bool fp64_reference = false;
};

// `spec` with each leading dimension of 0 (tight) made its stored row's length, as GemmProblem
// lays the operands out.
ProblemSpec with_leading_dimensions_filled(ProblemSpec spec);

// Where each operand's rows start, one from the next, in floats.
struct LeadingDimensions {
    int lda = 0, ldb = 0, ldc = 0;
};

class GemmProblem {
public:
    // Draws A, B and C0 uniformly from (-1, 1) (never zeros: they hide unwritten outputs
    // and wrong indexing), uploads them, computes A B and its bound |A| |B| (the reference
    // and bound of any alpha and beta follow), and leaves the output poisoned.
    GemmProblem(const ProblemSpec& spec, const CublasHandle& cublas, cudaStream_t stream);
    // The same problem laid out anew: A, B and C start at 256-byte boundaries with their rows
    // `lds` apart, each at least as long as the row it holds. They hold `first`'s values, with
    // NaN in the padding columns of A and B, so a kernel whose result depends on what lies past
    // a row's end fails, and one that takes a row's length for its leading dimension does. Its
    // reference and bound are `first`'s, laid out anew. Dispatch keys winners by alignment
    // class, not by leading dimension or by which operand is misaligned: a winner checked on
    // tight rows also serves views into larger matrices, such as one of Q, K and V in a fused
    // buffer (the check's layouts: later_layouts_for in tuner/candidate_check.h).
    GemmProblem(const GemmProblem& first, const LeadingDimensions& lds, cudaStream_t stream);

    const ProblemSpec& spec() const { return spec_; }
    // Judges the next runs at these alpha and beta, which args() passes: check_output makes
    // the reference and the bound of any alpha and beta from the products and C0.
    void set_scalars(float alpha, float beta);
    // Arguments that write into the output buffer, with the workspace reserved so far.
    SgemmArgs args() const;
    // The call's alignment class (alignment_class in db/shape_key.h), which a reserved
    // workspace leaves as it is.
    int call_alignment() const;
    // Grows the zeroed split-K workspace to at least `bytes` (see SgemmArgs::workspace), and
    // declares `bytes` as what the next runs may use: a checked run that writes into the
    // guard after them fails. Growing moves the workspace: take args() after it.
    void reserve_workspace(std::size_t bytes);
    // Why reserve_workspace(bytes) would run out of device memory, or empty when it fits: a
    // split-K candidate of a large shape can need more than the GPU holds (4 bytes x slices x
    // M x N), and a failed allocation would end the whole run rather than that candidate.
    std::string workspace_does_not_fit(std::size_t bytes) const;
    std::size_t workspace_bytes() const { return workspace_declared_; }
    // Before a checked run: the output becomes C0 when beta != 0 (it is read), and NaN
    // when beta == 0, so any element a kernel fails to write, or any read of C, shows. The
    // guards before and after C, and the padding columns past N when ldc > N, are filled
    // with a byte pattern, so any write outside C's elements shows too. The declared
    // workspace past its tile counters becomes NaN, so a kernel that reads partials or
    // staged operands it did not write fails; the guard after it gets the byte pattern.
    void poison_output(cudaStream_t stream);
    // Compares the output buffer with the reference and the guards and padding with their
    // pattern, and checks that the workspace's tile counters are back to zero (zeroing any
    // that are not, so the next run is judged on its own); synchronises the device.
    Accuracy check_output() const;
    // The output buffer as it is now (M x ldc floats); synchronises the device.
    std::vector<float> download_output() const;

    double flops() const;        // 2 M N K

private:
    float* c() const;  // C's first element, inside the output buffer after the leading guard
    void download_output_into(std::vector<float>& host) const;  // as download_output
    std::size_t leading_guard() const;  // floats before C: the guard, and spec_.offset_floats
    std::size_t trailing_guard() const;  // floats after C's last row
    std::size_t workspace_guard_begin() const;  // the byte where the workspace's guard starts
    // Counts the floats outside C's elements that differ from the guard pattern.
    void check_guards(const std::vector<float>& out, Accuracy& a) const;
    // Counts the workspace's non-zero tile counters and changed guard words.
    void check_workspace(Accuracy& a) const;

    ProblemSpec spec_;
    DeviceBuffer<float> a_, b_, c0_;  // A and B start spec_.offset_floats into theirs
    DeviceBuffer<float> output_;  // leading guard, C (M x ldc), trailing guard
    DeviceBuffer<unsigned char> workspace_;  // the counters, the partials, then the guard
    std::size_t workspace_declared_ = 0;
    static constexpr std::size_t kNoGuard = ~std::size_t{0};
    std::size_t workspace_guard_at_ = kNoGuard;  // where the last poison_output laid the guard
    // A B and |A| |B| (M x ldc), and C0, on the host: what check_output makes the reference
    // and the bound of the spec's alpha and beta from.
    std::vector<float> product_, abs_product_, c0_host_;
    // Where check_output downloads the output, kept from check to check: a new M x ldc
    // vector for each run cost its pages' first touches, as long as the comparison itself
    // at 4096 x 4096 (about 50 ms). So one problem is checked by one thread at a time, as
    // the check does.
    mutable std::vector<float> checked_output_;
};

}  // namespace sgemm
