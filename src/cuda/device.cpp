#include "src/cuda/device.h"

#include <cuda_runtime.h>

#include "src/cuda/check.h"

namespace sgemm {

namespace {
// 12040 -> "12.4", as cudaDriverGetVersion and cudaRuntimeGetVersion count.
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

std::string no_device_reason(cudaError_t status, int driver_version, int runtime_version) {
    if (status == cudaSuccess) return "the driver reports 0 devices";
    // Without any driver the runtime says its driver is "insufficient", which sends a user to
    // upgrade a driver that is not there; cudaDriverGetVersion gives 0 when none is installed.
    if (status == cudaErrorInsufficientDriver && driver_version == 0) return "no NVIDIA driver is installed";
    if (status == cudaErrorInsufficientDriver)
        return "the NVIDIA driver supports CUDA " + cuda_version_text(driver_version) + ", older than this build's runtime, " +
               cuda_version_text(runtime_version);
    return cudaGetErrorString(status);
}

void throw_count_failure(cudaError_t status, int driver_version, int runtime_version) {
    const std::string why = no_device_reason(status, driver_version, runtime_version);
    if (status == cudaSuccess || means_no_device(status)) throw NoDeviceError("no CUDA device is visible (" + why + ")");
    throw CudaError(std::string("CUDA could not reach the GPUs (cudaGetDeviceCount: ") + cudaGetErrorName(status) +
                    ": " + why + "); the driver supports CUDA " + cuda_version_text(driver_version) +
                    ", this build's runtime is " + cuda_version_text(runtime_version));
}

int device_count() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count > 0) return count;
    cudaGetLastError();
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);  // 0 where no driver is installed
    cudaRuntimeGetVersion(&runtime);
    throw_count_failure(status, driver, runtime);
}

DeviceInfo use_device(int ordinal) {
    const int count = device_count();
    if (ordinal < 0 || ordinal >= count)
        throw NoSuchDeviceError("device " + std::to_string(ordinal) + " does not exist: " +
                                (count == 1 ? std::string("1 CUDA device is visible, device 0")
                                            : std::to_string(count) + " CUDA devices are visible, 0 to " +
                                                  std::to_string(count - 1)));
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
    SGEMM_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
    SGEMM_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
    return info;
}

}  // namespace sgemm
