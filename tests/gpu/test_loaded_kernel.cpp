// LoadedKernel on the GPU (src/jit/loaded_kernel.h): its kernels are in the context once it is
// made, so a first launch never waits for the context.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "src/cuda/check.h"
#include "src/cuda/library.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/jit/loaded_kernel.h"
#include "tests/gpu/gpu_test_env.h"
#include "tuner/gemm_problem.h"

using namespace sgemm;

namespace {

// Spins until the host sets *release, or `limit_ns` pass: the kernel of another stream that
// waits for later work, as an inference engine's all-reduce does. It says it has started.
constexpr const char* kSpinsUntilReleased = R"(
__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
extern "C" __global__ void spin(volatile int* started, volatile int* release, unsigned long long limit_ns) {
    *started = 1;
    __threadfence_system();
    const unsigned long long start = now_ns();
    while (!*release && now_ns() - start < limit_ns) {
    }
}
)";

constexpr double kSpinLimitSeconds = 3.0;

// Host memory the device reads and writes while a kernel runs: two flags, each seen by the
// host at one address and by the device at another.
class MappedFlags {
public:
    MappedFlags() {
        SGEMM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&flags_), 2 * sizeof(int), cudaHostAllocMapped));
        SGEMM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags_), flags_, 0));
        flags_[0] = flags_[1] = 0;
    }
    ~MappedFlags() { cudaFreeHost(flags_); }
    MappedFlags(const MappedFlags&) = delete;
    MappedFlags& operator=(const MappedFlags&) = delete;
    volatile int* started() { return flags_; }
    volatile int* release() { return flags_ + 1; }
    int* device_started() { return device_flags_; }
    int* device_release() { return device_flags_ + 1; }

private:
    int* flags_ = nullptr;
    int* device_flags_ = nullptr;
};

// How long, in seconds, `launch` holds the host while the spinner runs on a stream of its own;
// the spinner is released after it and both streams are drained.
double host_seconds_of_launch_beside_spinner(cudaKernel_t spinner, const std::function<void(cudaStream_t)>& launch,
                                             cudaStream_t stream) {
    MappedFlags flags;
    Stream spinning;
    int* started = flags.device_started();
    int* release = flags.device_release();
    unsigned long long limit_ns = static_cast<unsigned long long>(kSpinLimitSeconds * 1e9);
    void* params[] = {&started, &release, &limit_ns};
    SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(spinner), dim3(1), dim3(1), params, 0,
                                      spinning.get()));
    const auto begin_wait = std::chrono::steady_clock::now();
    while (!*flags.started() && std::chrono::steady_clock::now() - begin_wait < std::chrono::seconds(1))
        std::this_thread::yield();
    const auto start = std::chrono::steady_clock::now();
    launch(stream);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    *flags.release() = 1;
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(spinning.get()));
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return seconds;
}

// Under lazy loading a kernel's first launch loads it, and a load may wait for the context to
// be idle: beside a kernel that spins until later work arrives, that launch would hang. A
// LoadedKernel loads its kernels when it is made, so its first launch returns at once. The same
// binary loaded without that (a Library alone) shows that the spinner would catch a lazy load
// here; where it does not (CUDA_MODULE_LOADING=EAGER, or a driver that loads without waiting),
// the two cannot be told apart and the test skips.
TEST(LoadedKernel, AFirstLaunchBesideASpinningKernelDoesNotWaitForIt) {
    SGEMM_REQUIRE_GPU(gpu);
    const Arch arch = compile_target_of(gpu->device);
    const Library spinner_library(compile_standalone("spin.cu", kSpinsUntilReleased, {}, arch).cubin);
    const cudaKernel_t spinner = spinner_library.kernel("spin");
    const Family& naive = find_family("naive");
    const CompiledKernel compiled = compile_kernel(naive, naive.defaults, arch);

    ProblemSpec spec;
    spec.M = 17, spec.N = 7, spec.K = 33;
    GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
    // The spinner's own first launch loads it; this one lets it and the copies settle first.
    host_seconds_of_launch_beside_spinner(spinner, [](cudaStream_t) {}, gpu->stream.get());

    const LoadedKernel loaded(naive, compiled);
    problem.poison_output(gpu->stream.get());
    const double eager = host_seconds_of_launch_beside_spinner(
        spinner, [&](cudaStream_t s) { loaded.launch(problem.args(), s); }, gpu->stream.get());
    EXPECT_LT(eager, kSpinLimitSeconds / 3) << "the first launch waited for the spinning kernel";
    std::printf("a LoadedKernel's first launch beside the spinner held the host %.6f s\n", eager);
    EXPECT_TRUE(problem.check_output().ok());

    const Library lazy_library(compiled.cubin);
    const cudaKernel_t lazy = lazy_library.kernel(compiled.lowered_name);
    const LaunchGeometry g = naive.geometry(naive.defaults, spec.M, spec.N, spec.K);
    SgemmArgs args = problem.args();
    void* params[] = {&args};
    const double lazy_seconds = host_seconds_of_launch_beside_spinner(
        spinner,
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
