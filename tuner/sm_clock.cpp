#include "tuner/sm_clock.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace sgemm {
namespace {

// The few NVML entry points we use, with their C signatures (nvml.h): status 0 is success.
using NvmlInit = int (*)();
using NvmlDeviceGetHandleByPciBusId = int (*)(const char*, void**);
using NvmlDeviceGetClockInfo = int (*)(void*, int, unsigned*);
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
    NvmlDeviceGetHandleByPciBusId handle_by_bus_id = nullptr;
    NvmlDeviceGetClockInfo clock_info = nullptr;
    bool ready = false;

    Nvml() {
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (!lib) return;
        auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
        handle_by_bus_id =
            reinterpret_cast<NvmlDeviceGetHandleByPciBusId>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        clock_info = reinterpret_cast<NvmlDeviceGetClockInfo>(dlsym(lib, "nvmlDeviceGetClockInfo"));
        ready = init && handle_by_bus_id && clock_info && init() == 0;
    }
};

}  // namespace

std::optional<int> read_sm_clock_mhz(int ordinal) {
    static const Nvml nvml;  // loaded once, kept for the process
    if (!nvml.ready) return std::nullopt;
    // "domain:bus:device.function" in hexadecimal, a form NVML's lookup takes.
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal) != cudaSuccess) {
        cudaGetLastError();  // a failed query is no reading; leave no error for the next call
        return std::nullopt;
    }
    void* device = nullptr;
    unsigned mhz = 0;
    if (nvml.handle_by_bus_id(bus_id, &device) != 0) return std::nullopt;
    if (nvml.clock_info(device, kNvmlClockSm, &mhz) != 0) return std::nullopt;
    return static_cast<int>(mhz);
}

}  // namespace sgemm
