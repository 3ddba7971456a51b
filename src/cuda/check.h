// Turns CUDA runtime, NVRTC and cuBLAS status codes into sgemm::Error with the failing
// call spelled out.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include "src/util/error.h"

namespace sgemm {

// A CUDA runtime call failed (SGEMM_CUDA_CHECK); the message names the call and the error.
// Apart from other errors so that a caller can tell a refusal by the GPU from a fault of its own.
struct CudaError : Error {
    using Error::Error;
};

// NVRTC itself failed (SGEMM_NVRTC_CHECK, or a compile that ended other than by refusing its
// source: the built-ins library missing or damaged, no memory). No source is to blame, so a
// tune must not count it as a candidate's failure: the same would meet every compile.
struct NvrtcError : Error {
    using Error::Error;
};

// Whether `status` says that this machine has no GPU for CUDA: no device, no driver (the
// runtime calls it insufficient), or the driver's stub library of a build machine. Any other
// failure to reach a GPU (a driver that does not match its kernel module, a device node
// missing from a container) is a fault of a GPU that is there, which "no device" would hide.
bool means_no_device(cudaError_t status);

// Throws NoDeviceError where `status` means_no_device, else CudaError.
void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
// Throws NvrtcError.
void throw_nvrtc_error(nvrtcResult status, const char* call, const char* file, int line);
void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace sgemm

#define SGEMM_CUDA_CHECK(call)                                                         \
    do {                                                                               \
        const cudaError_t sgemm_status_ = (call);                                      \
        if (sgemm_status_ != cudaSuccess)                                              \
            ::sgemm::throw_cuda_error(sgemm_status_, #call, __FILE__, __LINE__);       \
    } while (0)

#define SGEMM_NVRTC_CHECK(call)                                                        \
    do {                                                                               \
        const nvrtcResult sgemm_status_ = (call);                                      \
        if (sgemm_status_ != NVRTC_SUCCESS)                                            \
            ::sgemm::throw_nvrtc_error(sgemm_status_, #call, __FILE__, __LINE__);      \
    } while (0)

#define SGEMM_CUBLAS_CHECK(call)                                                       \
    do {                                                                               \
        const cublasStatus_t sgemm_status_ = (call);                                   \
        if (sgemm_status_ != CUBLAS_STATUS_SUCCESS)                                    \
            ::sgemm::throw_cublas_error(sgemm_status_, #call, __FILE__, __LINE__);     \
    } while (0)
