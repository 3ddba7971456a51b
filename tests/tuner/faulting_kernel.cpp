#include "tests/tuner/faulting_kernel.h"

#include <cstdint>
#include <string>

#include "db/store.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"
#include "tuner/candidate_check.h"

namespace sgemm::testing {
namespace {

constexpr const char* kTrapsAtOnce = "extern \"C\" __global__ void faults() { __trap(); }\n";

// A kernel that traps where `condition` holds, and else computes the right runs: naive's sums
// over K, one element a thread, through the families' own arguments and epilogue. `globals`
// come before it.
std::string naive_sums_unless(const std::string& globals, const std::string& condition) {
    return "#include \"sgemm_common.cuh\"\n" + globals +
           "extern \"C\" __global__ void faults(const SgemmArgs p) {\n"
           "    if (" + condition + ") __trap();\n"
           R"(    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    float acc = 0.0f;
    for (int k = 0; k < p.K; ++k) acc += p.A[sgemm_offset(row, k, p.lda)] * p.B[sgemm_offset(k, col, p.ldb)];
    sgemm_store(p, row, col, acc);
}
)";
}

// One thread of each launch counts it in a global of the module, which lives as long as the
// loaded kernel: the tuner checks and times one loaded candidate.
const std::string kTrapsOnceChecked = naive_sums_unless(
    "__device__ unsigned int launches_so_far;\n",
    "blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0 && launches_so_far++ >= CHECKED_RUNS");

// Every thread reads the flag: once it is set, the first block to see it traps.
const std::string kTrapsOnceReleased =
    naive_sums_unless("", "*reinterpret_cast<const volatile int*>(RELEASE_FLAG) != 0");

}  // namespace

KernelRef plant_a_kernel_that_faults(const std::string& path, Arch arch, FaultsOn when, int checked_runs,
                                     std::vector<int> values, const int* release_flag) {
    const Family& naive = find_family("naive");
    if (values.empty()) values = naive.defaults;
    CompiledKernel compiled = compile_kernel(naive, values, arch);
    StandaloneKernel faults;
    switch (when) {
        case FaultsOn::first_run:
            faults = compile_standalone("faults.cu", kTrapsAtOnce, {}, arch);
            break;
        case FaultsOn::after_the_check:
            faults = compile_standalone("faults.cu", kTrapsOnceChecked, {"CHECKED_RUNS=" + std::to_string(checked_runs)},
                                        arch, "sgemm_common.cuh");
            break;
        case FaultsOn::once_released:
            if (!release_flag) throw Error("a kernel that faults once released needs the flag's address");
            faults = compile_standalone(
                "faults.cu", kTrapsOnceReleased,
                {"RELEASE_FLAG=" + std::to_string(reinterpret_cast<std::uintptr_t>(release_flag)) + "ull"}, arch,
                "sgemm_common.cuh");
            break;
    }
    compiled.cubin = faults.cubin;
    compiled.ptxas = faults.ptxas;
    compiled.lowered_name = "faults";
    const KernelRef ref = kernel_ref(naive, values);
    TuningStore(path).put_binary(to_binary(compiled, ref));
    return ref;
}

}  // namespace sgemm::testing
