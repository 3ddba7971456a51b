// LoadedKernel on the GPU (src/jit/loaded_kernel.h): its kernels are in the context once it is
// made, so a first launch never waits for the context.
#include <gtest/gtest.h>

#include <cstdio>

#include "src/cuda/check.h"
#include "src/cuda/library.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/jit/loaded_kernel.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/spinner.h"
#include "tuner/gemm_problem.h"

using namespace sgemm;

namespace {

using sgemm::testing::kSpinLimitSeconds;
using sgemm::testing::Spinner;

// Under lazy loading a kernel's first launch loads it, and a load may wait for the context to
// be idle: beside a kernel that spins until later work arrives, that launch would hang. A
// LoadedKernel loads its kernels when it is made, so its first launch returns at once. The same
// binary loaded without that (a Library alone) shows that the spinner would catch a lazy load
// here; where it does not (CUDA_MODULE_LOADING=EAGER, or a driver that loads without waiting),
// the two cannot be told apart and the test skips.
TEST(LoadedKernel, AFirstLaunchBesideASpinningKernelDoesNotWaitForIt) {
    SGEMM_REQUIRE_GPU(gpu);
    const Arch arch = compile_target_of(gpu->device);
    const Spinner spinner(arch);
    const Family& naive = find_family("naive");
    const CompiledKernel compiled = compile_kernel(naive, naive.defaults, arch);

    ProblemSpec spec;
    spec.M = 17, spec.N = 7, spec.K = 33;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(gpu->stream.get()));  // the copies settle first

    const LoadedKernel loaded(naive, compiled);
    problem.poison_output(gpu->stream.get());
    const double eager =
        spinner.host_seconds_beside([&](cudaStream_t s) { loaded.launch(problem.args(), s); }, gpu->stream.get());
    EXPECT_LT(eager, kSpinLimitSeconds / 3) << "the first launch waited for the spinning kernel";
    std::printf("a LoadedKernel's first launch beside the spinner held the host %.6f s\n", eager);
    EXPECT_TRUE(problem.check_output().ok());

    const Library lazy_library(compiled.cubin);
    const cudaKernel_t lazy = lazy_library.kernel(compiled.lowered_name);
    const LaunchGeometry g = naive.geometry(naive.defaults, spec.M, spec.N, spec.K);
    SgemmArgs args = problem.args();
    void* params[] = {&args};
    const double lazy_seconds = spinner.host_seconds_beside(
        [&](cudaStream_t s) {
            SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(lazy), g.grid, g.block, params,
                                              g.dynamic_shared_bytes, s));
        },
        gpu->stream.get());
    std::printf("the same cubin loaded lazily: its first launch held the host %.6f s\n", lazy_seconds);
    if (lazy_seconds < kSpinLimitSeconds / 3)
        GTEST_SKIP() << "a kernel loaded lazily started in " << lazy_seconds
                     << " s beside the spinner too: this driver's loads do not wait for the context, so the test "
                        "cannot tell eager loading from lazy";
}

}  // namespace
