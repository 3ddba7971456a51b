// What the cost model needs to know of a GPU: its ceilings and its per-SM resources.
#pragma once
#include <string>

#include "src/cuda/device.h"
#include "src/jit/arch.h"

namespace sgemm {

struct DeviceModel {
    std::string name;
    Arch arch;
    int sm_count = 0;
    double fp32_flops = 0;   // FFMA peak, FLOP/s
    double bytes_per_s = 0;  // DRAM bandwidth
    ArchLimits limits;

    // Seconds for the larger of FLOPs at peak and bytes at bandwidth: a GEMM's floor.
    double floor_seconds(double flops, double bytes) const;
};

// The model of the GPU in hand: the built-in roofline spec when the name matches one
// (tuner/decode/gpu_spec.h; "NVIDIA H200" matches "H200"), else the peak from clock and SM
// count and the bandwidth from the memory clock and bus width.
DeviceModel device_model(const DeviceInfo& device);

// A stand-in for planning without a GPU (--dry-run): a built-in GPU's ceilings with the
// SM count given, compiled for `arch`.
DeviceModel planning_model(const std::string& gpu_name, int sm_count, Arch arch);
// The built-in GPU a compile target alone plans for: one of that arch, or of the newest arch
// below it that has one (sm_75 T4, sm_80 A100-80GB, sm_86 RTX 3090, sm_90 H200; so sm_89
// plans as an RTX 3090 and sm_100 as an H200). Throws Error below sm_75.
struct PlanningGpu {
    const char* name;
    int sm;  // its own arch, which may be below the target's
    int sm_count;
};
PlanningGpu planning_gpu(Arch arch);
// planning_model for that GPU, compiled for `arch`.
DeviceModel planning_model(Arch arch);

}  // namespace sgemm
