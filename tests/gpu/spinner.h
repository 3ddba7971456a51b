// A kernel that spins on one stream while a test times what another stream's first launch or
// call does beside it: the kernel of an inference engine's all-reduce, waiting for its peers.
// Where a first launch must wait for the device (a lazy load, cuBLAS's first call), it holds
// the host until the spinner ends.
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "src/cuda/library.h"
#include "src/jit/arch.h"

namespace sgemm::testing {

// How long the spinner spins when the host does not release it.
constexpr double kSpinLimitSeconds = 3.0;

class Spinner {
public:
    // Compiles the spinning kernel for `arch` and loads it; its own first launch is made here,
    // so that a timed launch never includes it.
    explicit Spinner(Arch arch);

    // How long, in seconds, `launch` holds the host while the spinner runs on a stream of its
    // own; the spinner is released after it, and both its stream and `stream` are drained.
    double host_seconds_beside(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream) const;

private:
    Library library_;
    cudaKernel_t kernel_ = nullptr;
};

}  // namespace sgemm::testing
