// DeviceBuffer<T>: owns one cudaMalloc allocation of count elements.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "src/cuda/check.h"

namespace sgemm {

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : count_(count) {
        if (count_ > 0) SGEMM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
    }
    ~DeviceBuffer() {
        if (data_) cudaFree(data_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
        return *this;
    }

    T* data() const { return data_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }

    void upload(const std::vector<T>& host) {
        if (host.size() != count_) throw Error("DeviceBuffer::upload: size mismatch");
        SGEMM_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
        // From pageable memory cudaMemcpy may return before the copy has landed, and it runs
        // on the legacy default stream, which kernels on non-blocking streams do not wait for.
        SGEMM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    }
    std::vector<T> download() const {
        std::vector<T> host(count_);
        SGEMM_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

}  // namespace sgemm
