#include "tests/gpu/spinner.h"

#include <chrono>
#include <thread>

#include "src/cuda/check.h"
#include "src/cuda/stream.h"
#include "src/jit/compiler.h"

namespace sgemm::testing {
namespace {

// Spins until the host sets *release, or `limit_ns` pass. It says it has started.
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

}  // namespace

Spinner::Spinner(Arch arch)
    : library_(compile_standalone("spin.cu", kSpinsUntilReleased, {}, arch).cubin), kernel_(library_.kernel("spin")) {
    const Stream settle;
    host_seconds_beside([](cudaStream_t) {}, settle.get());
}

double Spinner::host_seconds_beside(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream) const {
    MappedFlags flags;
    const Stream spinning;
    int* started = flags.device_started();
    int* release = flags.device_release();
    unsigned long long limit_ns = static_cast<unsigned long long>(kSpinLimitSeconds * 1e9);
    void* params[] = {&started, &release, &limit_ns};
    SGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(1), dim3(1), params, 0,
                                      spinning.get()));
    // Released and drained on every way out, a throwing `launch` too: the flags must outlive it.
    struct Release {
        MappedFlags& flags;
        const Stream& spinning;
        ~Release() {
            *flags.release() = 1;
            cudaStreamSynchronize(spinning.get());
        }
    } release_on_exit{flags, spinning};
    const auto begin_wait = std::chrono::steady_clock::now();
    while (!*flags.started() && std::chrono::steady_clock::now() - begin_wait < std::chrono::seconds(1))
        std::this_thread::yield();
    const auto start = std::chrono::steady_clock::now();
    launch(stream);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    *flags.release() = 1;
    spinning.synchronize();  // as release_on_exit will, but here a failed wait is reported
    SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return seconds;
}

}  // namespace sgemm::testing
