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
// The same for a compile target alone: a built-in GPU of that arch, or of the newest arch
// below it that has one (sm_75 T4, sm_80 A100, sm_86 RTX 3090, sm_90 H200; sm_89 plans as
// an RTX 3090). The model's name says which.
DeviceModel planning_model(Arch arch);

}  // namespace sgemm
