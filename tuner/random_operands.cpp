#include "tuner/random_operands.h"

#include <algorithm>
#include <cmath>

#include "src/cuda/stream.h"
#include "src/util/parallel_for.h"

namespace sgemm {
namespace {

// Page-locked host memory: the only kind a copy can run from while the host goes on.
template <typename T>
class PinnedBuffer {
public:
    explicit PinnedBuffer(std::size_t count) {
        SGEMM_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    }
    ~PinnedBuffer() { cudaFreeHost(data_); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    T* data() const { return data_; }

private:
    T* data_ = nullptr;
};

}  // namespace

float random_operand(std::uint64_t seed, std::uint64_t i) {
    std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    // The top 24 bits k give (2k + 1) / 2^24 - 1: an odd multiple of 2^-24 in (-1, 1), exact in
    // fp32 and never zero (a zero operand hides an output the kernel never wrote).
    const std::uint64_t k = z >> 40;
    return static_cast<float>(static_cast<double>(2 * k + 1) / static_cast<double>(1ULL << 24) - 1.0);
}

template <typename T>
void upload_random(DeviceBuffer<T>& out, std::uint64_t seed, Magnitude magnitude) {
    const std::size_t count = out.size();
    if (count == 0) return;
    // 16 MiB chunks: large enough that a copy runs near the bus's rate, small enough that
    // staging stays cheap to allocate.
    const std::size_t chunk = std::min<std::size_t>(count, (std::size_t{16} << 20) / sizeof(T));
    PinnedBuffer<T> staging[2] = {PinnedBuffer<T>(chunk), PinnedBuffer<T>(chunk)};
    Event copied[2];
    Stream copies;
    for (std::size_t begin = 0, n = 0; begin < count; begin += chunk, ++n) {
        const std::size_t size = std::min(chunk, count - begin);
        T* host = staging[n % 2].data();
        if (n >= 2) SGEMM_CUDA_CHECK(cudaEventSynchronize(copied[n % 2].get()));  // its last copy is done
        parallel_for(size, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) {
                const float v = random_operand(seed, begin + i);
                host[i] = static_cast<T>(magnitude == Magnitude::absolute_values ? std::fabs(v) : v);
            }
        });
        SGEMM_CUDA_CHECK(
            cudaMemcpyAsync(out.data() + begin, host, size * sizeof(T), cudaMemcpyHostToDevice, copies.get()));
        copied[n % 2].record(copies.get());
    }
    copies.synchronize();
}

template void upload_random<float>(DeviceBuffer<float>&, std::uint64_t, Magnitude);
template void upload_random<double>(DeviceBuffer<double>&, std::uint64_t, Magnitude);

}  // namespace sgemm
