#include "tuner/gemm_problem.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "db/shape_key.h"
#include "src/cuda/check.h"
#include "src/util/text.h"
#include "tuner/random_operands.h"

namespace sgemm {
namespace {

std::size_t elements(int rows, int ld) { return static_cast<std::size_t>(rows) * ld; }

// The output buffer's guards. 4 KiB before C (and ProblemSpec::offset_floats) keep C as
// aligned as the allocation (256 bytes), or offset as A and B are; after C, two rows or
// 4 KiB, whichever is longer, take a tile that runs a row or two past M. Their bytes, and
// the padding columns', are kGuardByte: as a float -2.9e-16, which no kernel writes there by
// chance.
constexpr std::size_t kLeadingGuard = 1024;  // floats
constexpr unsigned char kGuardByte = 0xa5;
// The workspace's guard, after the bytes a kernel declares, or after the counters when it
// declares none.
constexpr std::size_t kWorkspaceGuard = 64 * 1024;  // bytes

bool holds_guard_pattern(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits == 0x01010101u * kGuardByte;
}

// Into `host`, whose pages are kept where it holds `count` floats already.
void download_floats_into(std::vector<float>& host, const float* device, std::size_t count) {
    host.resize(count);
    SGEMM_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost));
}

std::vector<float> download_floats(const float* device, std::size_t count) {
    std::vector<float> host;
    download_floats_into(host, device, count);
    return host;
}

}  // namespace

ProblemSpec with_leading_dimensions_filled(ProblemSpec spec) {
    if (spec.lda == 0) spec.lda = spec.trans_a ? spec.M : spec.K;
    if (spec.ldb == 0) spec.ldb = spec.trans_b ? spec.K : spec.N;
    if (spec.ldc == 0) spec.ldc = spec.N;
    return spec;
}

GemmProblem::GemmProblem(const ProblemSpec& spec, const CublasHandle& cublas, cudaStream_t stream)
    : spec_(with_leading_dimensions_filled(spec)) {
    // Rows and row lengths of A and B as stored.
    const int a_rows = spec_.trans_a ? spec_.K : spec_.M, a_cols = spec_.trans_a ? spec_.M : spec_.K;
    const int b_rows = spec_.trans_b ? spec_.N : spec_.K, b_cols = spec_.trans_b ? spec_.K : spec_.N;
    if (spec_.M < 1 || spec_.N < 1 || spec_.K < 1) throw Error("GEMM dimensions must be at least 1");
    if (spec_.lda < a_cols || spec_.ldb < b_cols || spec_.ldc < spec_.N)
        throw Error("leading dimensions must be at least the row length");
    if (spec_.offset_floats < 0 || spec_.offset_floats > 3) throw Error("operands start 0 to 3 floats past 256 bytes");

    // Three streams of one seed, one per operand.
    const std::uint64_t seed_a = spec_.seed * 3, seed_b = spec_.seed * 3 + 1, seed_c = spec_.seed * 3 + 2;
    // A and B start `offset` floats into their buffers. Every buffer of them below holds the
    // same draw from index 0, so element i of the matrix is draw i + offset in each.
    const std::size_t offset = static_cast<std::size_t>(spec_.offset_floats);
    const std::size_t a_count = offset + elements(a_rows, spec_.lda), b_count = offset + elements(b_rows, spec_.ldb),
                      c_count = elements(spec_.M, spec_.ldc);
    a_ = DeviceBuffer<float>(a_count);
    b_ = DeviceBuffer<float>(b_count);
    c0_ = DeviceBuffer<float>(c_count);
    output_ = DeviceBuffer<float>(leading_guard() + c_count + trailing_guard());
    upload_random(a_, seed_a, Magnitude::signed_values);
    upload_random(b_, seed_b, Magnitude::signed_values);
    upload_random(c0_, seed_c, Magnitude::signed_values);

    // The product A B without alpha and beta, by cuBLAS on the same operands in fp32 or fp64,
    // and its bound |A| |B|: the reference and bound of any alpha and beta follow from them
    // and C0 as check_output compares.
    SgemmArgs product_args = args();
    product_args.alpha = 1.0f;
    product_args.beta = 0.0f;
    if (spec_.fp64_reference) {
        DeviceBuffer<double> a64(a_count), b64(b_count), c64(c_count);
        upload_random(a64, seed_a, Magnitude::signed_values);
        upload_random(b64, seed_b, Magnitude::signed_values);
        SGEMM_CUDA_CHECK(cudaMemsetAsync(c64.data(), 0, c64.bytes(), stream));  // padding columns: no GEMM writes them
        cublas.dgemm(spec_.M, spec_.N, spec_.K, 1.0, a64.data() + offset, spec_.lda, b64.data() + offset, spec_.ldb,
                     0.0, c64.data(), spec_.ldc, stream, spec_.trans_a, spec_.trans_b);
        SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<double> c = c64.download();
        product_.assign(c.begin(), c.end());
    } else {
        cublas.sgemm(product_args, stream, spec_.trans_a, spec_.trans_b);
        product_ = download_output();
    }
    DeviceBuffer<float> abs_a(a_count), abs_b(b_count);
    upload_random(abs_a, seed_a, Magnitude::absolute_values);
    upload_random(abs_b, seed_b, Magnitude::absolute_values);
    SgemmArgs bound_args = product_args;
    bound_args.A = abs_a.data() + offset;
    bound_args.B = abs_b.data() + offset;
    cublas.sgemm(bound_args, stream, spec_.trans_a, spec_.trans_b);
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    abs_product_ = download_output();
    c0_host_ = c0_.download();
    // Poisoned from the start (the products were computed in the output), so a kernel
    // that writes nothing fails even where a caller checks without poisoning first.
    poison_output(stream);
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

namespace {

// `matrix`, `rows` rows of `row_length` values `from_ld` apart, laid out `to_ld` apart (the
// padding columns zero: the comparison reads only the row's values).
std::vector<float> laid_out_anew(const std::vector<float>& matrix, int rows, int row_length, int from_ld, int to_ld) {
    std::vector<float> out(elements(rows, to_ld), 0.0f);
    for (int r = 0; r < rows; ++r)
        std::copy_n(matrix.begin() + static_cast<std::ptrdiff_t>(elements(r, from_ld)), row_length,
                    out.begin() + static_cast<std::ptrdiff_t>(elements(r, to_ld)));
    return out;
}

// Copies a matrix of `rows` rows of `row_length` floats, `from_offset` floats into `from`
// with rows `from_ld` apart, to the start of `to` with rows `to_ld` apart and NaN in the
// padding columns.
void copy_laid_out_anew(const DeviceBuffer<float>& from, std::size_t from_offset, int from_ld, DeviceBuffer<float>& to,
                        int to_ld, int rows, int row_length, cudaStream_t stream) {
    SGEMM_CUDA_CHECK(cudaMemsetAsync(to.data(), 0xff, to.bytes(), stream));  // all-ones bits: NaN
    SGEMM_CUDA_CHECK(cudaMemcpy2DAsync(to.data(), to_ld * sizeof(float), from.data() + from_offset,
                                       from_ld * sizeof(float), row_length * sizeof(float), rows,
                                       cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

GemmProblem::GemmProblem(const GemmProblem& first, const LeadingDimensions& lds, cudaStream_t stream)
    : spec_(first.spec_) {
    const int a_rows = spec_.trans_a ? spec_.K : spec_.M, a_cols = spec_.trans_a ? spec_.M : spec_.K;
    const int b_rows = spec_.trans_b ? spec_.N : spec_.K, b_cols = spec_.trans_b ? spec_.K : spec_.N;
    if (lds.lda < a_cols || lds.ldb < b_cols || lds.ldc < spec_.N)
        throw Error("leading dimensions must be at least the row length");
    spec_.lda = lds.lda, spec_.ldb = lds.ldb, spec_.ldc = lds.ldc;
    spec_.offset_floats = 0;
    const std::size_t from_offset = static_cast<std::size_t>(first.spec_.offset_floats);
    a_ = DeviceBuffer<float>(elements(a_rows, spec_.lda));
    b_ = DeviceBuffer<float>(elements(b_rows, spec_.ldb));
    c0_ = DeviceBuffer<float>(elements(spec_.M, spec_.ldc));
    output_ = DeviceBuffer<float>(leading_guard() + c0_.size() + trailing_guard());
    copy_laid_out_anew(first.a_, from_offset, first.spec_.lda, a_, spec_.lda, a_rows, a_cols, stream);
    copy_laid_out_anew(first.b_, from_offset, first.spec_.ldb, b_, spec_.ldb, b_rows, b_cols, stream);
    // C0's padding is never read: poison_output copies C0 whole, and then lays the guard
    // pattern over its padding columns.
    copy_laid_out_anew(first.c0_, 0, first.spec_.ldc, c0_, spec_.ldc, spec_.M, spec_.N, stream);
    const int from_ldc = first.spec_.ldc;
    product_ = laid_out_anew(first.product_, spec_.M, spec_.N, from_ldc, spec_.ldc);
    abs_product_ = laid_out_anew(first.abs_product_, spec_.M, spec_.N, from_ldc, spec_.ldc);
    c0_host_ = laid_out_anew(first.c0_host_, spec_.M, spec_.N, from_ldc, spec_.ldc);
    poison_output(stream);
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void GemmProblem::set_scalars(float alpha, float beta) {
    spec_.alpha = alpha;
    spec_.beta = beta;
}

float* GemmProblem::c() const { return output_.data() + leading_guard(); }

std::size_t GemmProblem::leading_guard() const { return kLeadingGuard + static_cast<std::size_t>(spec_.offset_floats); }

std::size_t GemmProblem::trailing_guard() const {
    return std::max(kLeadingGuard, 2 * static_cast<std::size_t>(spec_.ldc));
}

SgemmArgs GemmProblem::args() const {
    const int offset = spec_.offset_floats;
    return SgemmArgs{spec_.M, spec_.N, spec_.K, spec_.alpha, spec_.beta, a_.data() + offset, spec_.lda,
                     b_.data() + offset, spec_.ldb, c(), spec_.ldc, workspace_.data()};
}

int GemmProblem::call_alignment() const {
    const SgemmArgs a = args();
    return alignment_class(a.A, a.lda, a.B, a.ldb, a.C, a.ldc);
}

void GemmProblem::reserve_workspace(std::size_t bytes) {
    workspace_declared_ = bytes;
    if (bytes == 0 || workspace_guard_begin() + kWorkspaceGuard <= workspace_.size()) return;
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());  // the old buffer may still be in use
    workspace_ = DeviceBuffer<unsigned char>(workspace_guard_begin() + kWorkspaceGuard);
    workspace_guard_at_ = kNoGuard;  // the new buffer's guard is laid by the next poison_output
    // cudaMemset runs on the legacy default stream, which does not order work on the
    // non-blocking streams kernels run on: without the wait, a split-K kernel could count
    // its blocks in before the counters were zeroed (rare split-K test failures fit this).
    SGEMM_CUDA_CHECK(cudaMemset(workspace_.data(), 0, workspace_.size()));
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string GemmProblem::workspace_does_not_fit(std::size_t bytes) const {
    const std::size_t needed = std::max<std::size_t>(bytes, SGEMM_WORKSPACE_COUNTER_BYTES) + kWorkspaceGuard;
    if (bytes == 0 || needed <= workspace_.size()) return "";
    std::size_t free_bytes = 0, total_bytes = 0;
    SGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (needed <= free_bytes) return "";  // the new buffer is made before the old one goes
    char text[200];
    std::snprintf(text, sizeof text, "its split-K workspace of %.2f GiB does not fit the %.2f GiB of device memory free",
                  needed / 1073741824.0, free_bytes / 1073741824.0);
    return text;
}

std::size_t GemmProblem::workspace_guard_begin() const {
    return std::max<std::size_t>(workspace_declared_, SGEMM_WORKSPACE_COUNTER_BYTES);
}

void GemmProblem::poison_output(cudaStream_t stream) {
    SGEMM_CUDA_CHECK(cudaMemsetAsync(output_.data(), kGuardByte, leading_guard() * sizeof(float), stream));
    SGEMM_CUDA_CHECK(cudaMemsetAsync(c() + c0_.size(), kGuardByte, trailing_guard() * sizeof(float), stream));
    if (spec_.beta != 0.0f)
        SGEMM_CUDA_CHECK(cudaMemcpyAsync(c(), c0_.data(), c0_.bytes(), cudaMemcpyDeviceToDevice, stream));
    else
        SGEMM_CUDA_CHECK(cudaMemsetAsync(c(), 0xff, c0_.bytes(), stream));  // all-ones bits: NaN
    if (spec_.ldc > spec_.N)
        SGEMM_CUDA_CHECK(cudaMemset2DAsync(c() + spec_.N, spec_.ldc * sizeof(float), kGuardByte,
                                           (spec_.ldc - spec_.N) * sizeof(float), spec_.M, stream));
    // The counters must stay zero. What follows them (split-K partials, staged operands) a
    // kernel must write before it reads: NaN there makes one that reads what it did not write
    // fail, where the last candidate's values for the same operands would have passed (in
    // dispatch the workspace holds other shapes' data).
    if (workspace_.size() > 0) {
        if (workspace_declared_ > SGEMM_WORKSPACE_COUNTER_BYTES)
            SGEMM_CUDA_CHECK(cudaMemsetAsync(workspace_.data() + SGEMM_WORKSPACE_COUNTER_BYTES, 0xff,
                                             workspace_declared_ - SGEMM_WORKSPACE_COUNTER_BYTES, stream));
        workspace_guard_at_ = workspace_guard_begin();
        SGEMM_CUDA_CHECK(cudaMemsetAsync(workspace_.data() + workspace_guard_at_, kGuardByte, kWorkspaceGuard, stream));
    }
}

void GemmProblem::download_output_into(std::vector<float>& host) const {
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    download_floats_into(host, c(), c0_.size());
}

std::vector<float> GemmProblem::download_output() const {
    std::vector<float> out;
    download_output_into(out);
    return out;
}

Accuracy GemmProblem::check_output() const {
    download_output_into(checked_output_);
    const std::vector<float>& out = checked_output_;
    Accuracy a = compare_to_reference(out, Reference{product_, abs_product_, c0_host_, spec_.alpha, spec_.beta},
                                      spec_.M, spec_.N, spec_.ldc, spec_.K);
    check_guards(out, a);
    check_workspace(a);
    return a;
}

void GemmProblem::check_workspace(Accuracy& a) const {
    a.workspace_declared = workspace_declared_;
    if (workspace_.size() == 0) return;
    std::vector<std::uint32_t> counters(SGEMM_WORKSPACE_MAX_COUNTERS);
    SGEMM_CUDA_CHECK(
        cudaMemcpy(counters.data(), workspace_.data(), SGEMM_WORKSPACE_COUNTER_BYTES, cudaMemcpyDeviceToHost));
    a.counters_left = static_cast<std::size_t>(
        std::count_if(counters.begin(), counters.end(), [](std::uint32_t v) { return v != 0; }));
    // Zero them again: the next run on this workspace is judged on its own, not failed for
    // this one's counters.
    if (a.counters_left > 0) {
        SGEMM_CUDA_CHECK(cudaMemset(workspace_.data(), 0, SGEMM_WORKSPACE_COUNTER_BYTES));
        SGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    // Where poison_output laid the guard: a declaration made since does not move it.
    if (workspace_guard_at_ == kNoGuard) return;
    const auto* guard_start = reinterpret_cast<const float*>(workspace_.data() + workspace_guard_at_);
    const std::vector<float> guard = download_floats(guard_start, kWorkspaceGuard / sizeof(float));
    a.workspace_overrun = static_cast<std::size_t>(
        std::count_if(guard.begin(), guard.end(), [](float v) { return !holds_guard_pattern(v); }));
}

void GemmProblem::check_guards(const std::vector<float>& out, Accuracy& a) const {
    auto changed = [&](const std::string& where) {
        if (a.outside_writes++ == 0) a.first_outside = where;
    };
    const int N = spec_.N, ldc = spec_.ldc;
    // In address order, so the first one counted is the lowest.
    const std::vector<float> leading = download_floats(output_.data(), leading_guard());
    for (std::size_t i = 0; i < leading.size(); ++i)
        if (!holds_guard_pattern(leading[i]))
            changed(count_of(leading_guard() - i, "float", "floats") + " before C[0][0]");
    for (int row = 0; row < spec_.M; ++row)
        for (int col = N; col < ldc; ++col)
            if (!holds_guard_pattern(out[elements(row, ldc) + col]))
                changed("at C[" + std::to_string(row) + "][" + std::to_string(col) + "], in the padding past column " +
                        std::to_string(N - 1));
    const std::vector<float> trailing = download_floats(c() + c0_.size(), trailing_guard());
    for (std::size_t i = 0; i < trailing.size(); ++i)
        if (!holds_guard_pattern(trailing[i]))
            changed("at C[" + std::to_string(spec_.M + i / ldc) + "][" + std::to_string(i % ldc) +
                    "], past C's last row");
}

double GemmProblem::flops() const { return 2.0 * spec_.M * spec_.N * static_cast<double>(spec_.K); }

}  // namespace sgemm
