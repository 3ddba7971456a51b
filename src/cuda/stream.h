// Stream and Event: RAII over cudaStream_t and cudaEvent_t.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "src/cuda/check.h"

namespace sgemm {

class Stream {
public:
    Stream() { SGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~Stream() {
        if (stream_) cudaStreamDestroy(stream_);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

    cudaStream_t get() const { return stream_; }
    void synchronize() const { SGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
    cudaStream_t stream_ = nullptr;
};

class Event {
public:
    Event() { SGEMM_CUDA_CHECK(cudaEventCreate(&event_)); }
    ~Event() {
        if (event_) cudaEventDestroy(event_);
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

    cudaEvent_t get() const { return event_; }
    void record(cudaStream_t stream) { SGEMM_CUDA_CHECK(cudaEventRecord(event_, stream)); }

    // Milliseconds from `start` to this event; both must have completed.
    float elapsed_since(const Event& start) const {
        SGEMM_CUDA_CHECK(cudaEventSynchronize(event_));
        float ms = 0.0f;
        SGEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
        return ms;
    }

private:
    cudaEvent_t event_ = nullptr;
};

}  // namespace sgemm
