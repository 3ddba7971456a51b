#include "src/cuda/device.h"

#include <cuda_runtime.h>

#include "src/cuda/check.h"

namespace sgemm {

int device_count() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        cudaGetLastError();
        throw NoDeviceError(std::string("no CUDA device is visible (") +
                            (status == cudaSuccess ? "the driver reports 0 devices"
                                                   : cudaGetErrorString(status)) +
                            ")");
    }
    return count;
}

DeviceInfo use_device(int ordinal) {
    const int count = device_count();
    if (ordinal < 0 || ordinal >= count)
        throw Error("device " + std::to_string(ordinal) + " does not exist: " +
                    std::to_string(count) + " CUDA device(s) visible");
    SGEMM_CUDA_CHECK(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    SGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    DeviceInfo info;
    info.ordinal = ordinal;
    info.name = prop.name;
    info.cc_major = prop.major;
    info.cc_minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.global_memory_bytes = prop.totalGlobalMem;
    info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
    info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
    info.shared_per_sm = prop.sharedMemPerMultiprocessor;
    info.registers_per_sm = prop.regsPerMultiprocessor;
    info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    SGEMM_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
    SGEMM_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
    return info;
}

}  // namespace sgemm
