#include "tests/tuner/faulting_kernel.h"

#include "db/store.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"

namespace sgemm::testing {

KernelRef plant_a_kernel_that_faults(const std::string& path, Arch arch) {
    const Family& naive = find_family("naive");
    CompiledKernel compiled = compile_kernel(naive, naive.defaults, arch);
    const StandaloneKernel faults =
        compile_standalone("faults.cu", "extern \"C\" __global__ void faults() { __trap(); }", {}, arch);
    compiled.cubin = faults.cubin;
    compiled.ptxas = faults.ptxas;
    compiled.lowered_name = "faults";
    const KernelRef ref = kernel_ref(naive, naive.defaults);
    TuningStore(path).put_binary(to_binary(compiled, ref));
    return ref;
}

}  // namespace sgemm::testing
