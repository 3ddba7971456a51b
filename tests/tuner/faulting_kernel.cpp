#include "tests/tuner/faulting_kernel.h"

#include "db/store.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"
#include "tuner/candidate_check.h"

namespace sgemm::testing {
namespace {

constexpr const char* kTrapsAtOnce = "extern \"C\" __global__ void faults() { __trap(); }\n";

// One thread of each launch counts it in a global of the module, which lives as long as the
// loaded kernel: the tuner checks and times one loaded candidate. The right runs are naive's
// sums over K, one element a thread, through the families' own arguments and epilogue.
constexpr const char* kTrapsOnceChecked = R"(#include "sgemm_common.cuh"
__device__ unsigned int launches_so_far;
extern "C" __global__ void faults(const SgemmArgs p) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0 &&
        launches_so_far++ >= CHECKED_RUNS)
        __trap();
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k) acc += p.A[sgemm_offset(row, k, p.lda)] * p.B[sgemm_offset(k, col, p.ldb)];
    sgemm_store(p, row, col, acc);
}
)";

}  // namespace

KernelRef plant_a_kernel_that_faults(const std::string& path, Arch arch, FaultsOn when, int checked_runs,
                                     std::vector<int> values) {
    const Family& naive = find_family("naive");
    if (values.empty()) values = naive.defaults;
    CompiledKernel compiled = compile_kernel(naive, values, arch);
    const StandaloneKernel faults =
        when == FaultsOn::first_run
            ? compile_standalone("faults.cu", kTrapsAtOnce, {}, arch)
            : compile_standalone("faults.cu", kTrapsOnceChecked, {"CHECKED_RUNS=" + std::to_string(checked_runs)},
                                 arch, "sgemm_common.cuh");
    compiled.cubin = faults.cubin;
    compiled.ptxas = faults.ptxas;
    compiled.lowered_name = "faults";
    const KernelRef ref = kernel_ref(naive, values);
    TuningStore(path).put_binary(to_binary(compiled, ref));
    return ref;
}

}  // namespace sgemm::testing
