// What we know about the GPU we run on: enough to pick the compile target, size the L2
// flush, compute rooflines and fingerprint tuning results.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace sgemm {

struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::size_t global_memory_bytes = 0;
    std::size_t l2_bytes = 0;
    int driver_version = 0;   // as cudaDriverGetVersion: 13000 = 13.0
    int runtime_version = 0;  // as cudaRuntimeGetVersion

    int sm() const { return cc_major * 10 + cc_minor; }
};

// Number of usable CUDA devices. Throws NoDeviceError, whose message says plainly that no
// CUDA device is visible, when there is none or no driver to reach one; CudaError when CUDA
// fails to reach GPUs that are there (throw_count_failure).
int device_count();

// Why cudaGetDeviceCount found no device, for that message: its `status`, told apart by the
// driver's and runtime's versions (cudaDriverGetVersion and cudaRuntimeGetVersion).
std::string no_device_reason(cudaError_t status, int driver_version, int runtime_version);

// What device_count throws where cudaGetDeviceCount gave `status` (cudaSuccess: it counted
// 0): NoDeviceError where the status means_no_device, else CudaError naming the status and
// both versions, since a driver whose library and kernel module differ, or a container
// without the device nodes, has GPUs that a user must be told are failing.
[[noreturn]] void throw_count_failure(cudaError_t status, int driver_version, int runtime_version);

// Properties of `ordinal`, also made current for this thread. An ordinal past the devices
// that are visible throws NoSuchDeviceError (none visible: device_count's NoDeviceError).
DeviceInfo use_device(int ordinal = 0);

}  // namespace sgemm
