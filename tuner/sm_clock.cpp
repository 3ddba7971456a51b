#include "tuner/sm_clock.h"

#include <dlfcn.h>

namespace sgemm {
namespace {

// The few NVML entry points we use, with their C signatures (nvml.h): status 0 is success.
using NvmlInit = int (*)();
using NvmlDeviceGetHandleByIndex = int (*)(unsigned, void**);
using NvmlDeviceGetClockInfo = int (*)(void*, int, unsigned*);
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
    NvmlDeviceGetHandleByIndex handle_by_index = nullptr;
    NvmlDeviceGetClockInfo clock_info = nullptr;
    bool ready = false;

    Nvml() {
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (!lib) return;
        auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
        handle_by_index = reinterpret_cast<NvmlDeviceGetHandleByIndex>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
        clock_info = reinterpret_cast<NvmlDeviceGetClockInfo>(dlsym(lib, "nvmlDeviceGetClockInfo"));
        ready = init && handle_by_index && clock_info && init() == 0;
    }
};

}  // namespace

std::optional<int> read_sm_clock_mhz(int ordinal) {
    static const Nvml nvml;  // loaded once, kept for the process
    if (!nvml.ready) return std::nullopt;
    void* device = nullptr;
    unsigned mhz = 0;
    if (nvml.handle_by_index(static_cast<unsigned>(ordinal), &device) != 0) return std::nullopt;
    if (nvml.clock_info(device, kNvmlClockSm, &mhz) != 0) return std::nullopt;
    return static_cast<int>(mhz);
}

}  // namespace sgemm
