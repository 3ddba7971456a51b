#include "tuner/gemm_problem.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>

#include "src/cuda/check.h"

namespace sgemm {
namespace {

// Runs body(begin, end) over [0, count) split across the machine's cores: generating the
// operands of a 128256 x 4096 weight on one core alone takes seconds.
void parallel_for(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body) {
    const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t chunk = (count + threads - 1) / threads;
    std::vector<std::thread> pool;
    for (std::size_t begin = 0; begin < count; begin += chunk)
        pool.emplace_back(body, begin, std::min(count, begin + chunk));
    for (std::thread& t : pool) t.join();
}

// Element i of a matrix is splitmix64(seed, i) mapped to [-1, 1): counter-based, so the
// values do not depend on how the work is split across threads.
float uniform_pm1(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 40) / static_cast<double>(1ULL << 24) * 2.0 - 1.0);
}

std::vector<float> random_matrix(std::size_t count, std::uint64_t seed) {
    std::vector<float> m(count);
    parallel_for(count, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) m[i] = uniform_pm1(seed, i);
    });
    return m;
}

std::vector<float> absolute(const std::vector<float>& m) {
    std::vector<float> out(m.size());
    parallel_for(m.size(), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) out[i] = std::fabs(m[i]);
    });
    return out;
}

std::size_t elements(int rows, int ld) { return static_cast<std::size_t>(rows) * ld; }

}  // namespace

GemmProblem::GemmProblem(const ProblemSpec& spec, const CublasHandle& cublas, cudaStream_t stream)
    : spec_(spec) {
    // Rows and row lengths of A and B as stored.
    const int a_rows = spec_.trans_a ? spec_.K : spec_.M, a_cols = spec_.trans_a ? spec_.M : spec_.K;
    const int b_rows = spec_.trans_b ? spec_.N : spec_.K, b_cols = spec_.trans_b ? spec_.K : spec_.N;
    if (spec_.lda == 0) spec_.lda = a_cols;
    if (spec_.ldb == 0) spec_.ldb = b_cols;
    if (spec_.ldc == 0) spec_.ldc = spec_.N;
    if (spec_.M < 1 || spec_.N < 1 || spec_.K < 1) throw Error("GEMM dimensions must be at least 1");
    if (spec_.lda < a_cols || spec_.ldb < b_cols || spec_.ldc < spec_.N)
        throw Error("leading dimensions must be at least the row length");

    // Three streams of one seed, one per operand.
    const std::vector<float> a = random_matrix(elements(a_rows, spec_.lda), spec_.seed * 3);
    const std::vector<float> b = random_matrix(elements(b_rows, spec_.ldb), spec_.seed * 3 + 1);
    const std::vector<float> c0 = random_matrix(elements(spec_.M, spec_.ldc), spec_.seed * 3 + 2);
    a_ = DeviceBuffer<float>(a.size());
    b_ = DeviceBuffer<float>(b.size());
    c0_ = DeviceBuffer<float>(c0.size());
    c_ = DeviceBuffer<float>(c0.size());
    a_.upload(a);
    b_.upload(b);
    c0_.upload(c0);

    // Reference: cuBLAS on the same operands, starting from C0, in fp32 or fp64.
    if (spec_.fp64_reference) {
        reference_ = fp64_reference(a, b, c0, cublas, stream);
    } else {
        c_.copy_from_async(c0_, stream);
        cublas.sgemm(args(), stream, spec_.trans_a, spec_.trans_b);
        SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
        reference_ = c_.download();
    }

    // Bound: |alpha| |A| |B| + |beta| |C0|, by the same GEMM on absolute values.
    DeviceBuffer<float> abs_a(a.size()), abs_b(b.size());
    abs_a.upload(absolute(a));
    abs_b.upload(absolute(b));
    c_.upload(absolute(c0));
    SgemmArgs bound_args = args();
    bound_args.A = abs_a.data();
    bound_args.B = abs_b.data();
    bound_args.alpha = std::fabs(spec_.alpha);
    bound_args.beta = std::fabs(spec_.beta);
    cublas.sgemm(bound_args, stream, spec_.trans_a, spec_.trans_b);
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    bound_ = c_.download();
}

std::vector<float> GemmProblem::fp64_reference(const std::vector<float>& a, const std::vector<float>& b,
                                               const std::vector<float>& c0, const CublasHandle& cublas,
                                               cudaStream_t stream) const {
    auto widen = [](const std::vector<float>& m) { return std::vector<double>(m.begin(), m.end()); };
    DeviceBuffer<double> a64(a.size()), b64(b.size()), c64(c0.size());
    a64.upload(widen(a));
    b64.upload(widen(b));
    c64.upload(widen(c0));
    cublas.dgemm(spec_.M, spec_.N, spec_.K, spec_.alpha, a64.data(), spec_.lda, b64.data(), spec_.ldb, spec_.beta,
                 c64.data(), spec_.ldc, stream, spec_.trans_a, spec_.trans_b);
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<double> c = c64.download();
    return std::vector<float>(c.begin(), c.end());
}

SgemmArgs GemmProblem::args() const {
    return SgemmArgs{spec_.M, spec_.N, spec_.K, spec_.alpha, spec_.beta, a_.data(), spec_.lda,
                     b_.data(), spec_.ldb, c_.data(), spec_.ldc, workspace_.data()};
}

void GemmProblem::reserve_workspace(std::size_t bytes) {
    if (bytes <= workspace_.size()) return;
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());  // the old buffer may still be in use
    workspace_ = DeviceBuffer<unsigned char>(bytes);
    // cudaMemset runs on the legacy default stream, which does not order work on the
    // non-blocking streams kernels run on: without the wait, a split-K kernel could count
    // its blocks in before the counters were zeroed (rare split-K test failures fit this).
    SGEMM_CUDA_CHECK(cudaMemset(workspace_.data(), 0, bytes));
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());
}

void GemmProblem::poison_output(cudaStream_t stream) {
    if (spec_.beta != 0.0f)
        c_.copy_from_async(c0_, stream);
    else
        SGEMM_CUDA_CHECK(cudaMemsetAsync(c_.data(), 0xff, c_.bytes(), stream));  // all-ones bits: NaN
}

std::vector<float> GemmProblem::download_output() const {
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());
    return c_.download();
}

Accuracy GemmProblem::check_output() const {
    return compare_to_reference(download_output(), reference_, bound_, spec_.M, spec_.N, spec_.ldc, spec_.K);
}

double GemmProblem::flops() const { return 2.0 * spec_.M * spec_.N * static_cast<double>(spec_.K); }

double GemmProblem::min_bytes() const {
    const double m = spec_.M, n = spec_.N, k = spec_.K;
    return 4.0 * (m * k + k * n + m * n + (spec_.beta != 0.0f ? m * n : 0.0));
}

}  // namespace sgemm
