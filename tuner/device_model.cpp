#include "tuner/device_model.h"

#include <algorithm>

#include <cuda_runtime.h>

#include "src/util/error.h"
#include "tuner/decode/gpu_spec.h"

namespace sgemm {

double DeviceModel::floor_seconds(double flops, double bytes) const {
    return std::max(flops / fp32_flops, bytes / bytes_per_s);
}

DeviceModel device_model(const DeviceInfo& device) {
    DeviceModel m;
    m.name = device.name;
    m.arch = Arch{device.sm()};
    m.sm_count = device.sm_count;
    m.limits = arch_limits(m.arch);
    std::string short_name = device.name;
    if (short_name.rfind("NVIDIA ", 0) == 0) short_name = short_name.substr(7);
    try {
        const GpuSpec spec = find_builtin_gpu(short_name);
        m.fp32_flops = spec.peak_flops(Precision::fp32);
        m.bytes_per_s = spec.bytes_per_s();
        return m;
    } catch (const Error&) {
        // Not a built-in: derive the ceilings from what the device reports.
    }
    int clock_khz = 0, memory_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device.ordinal);
    cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device.ordinal);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device.ordinal);
    cudaGetLastError();
    m.fp32_flops = 2.0 * 128 * device.sm_count * std::max(clock_khz, 1000000) * 1e3;  // 128 FMA lanes per SM
    m.bytes_per_s = memory_khz > 0 && bus_bits > 0 ? 2.0 * memory_khz * 1e3 * bus_bits / 8 : 1e12;
    return m;
}

DeviceModel planning_model(const std::string& gpu_name, int sm_count, Arch arch) {
    const GpuSpec spec = find_builtin_gpu(gpu_name);
    DeviceModel m;
    m.name = spec.name;
    m.arch = arch;
    m.sm_count = sm_count;
    m.fp32_flops = spec.peak_flops(Precision::fp32);
    m.bytes_per_s = spec.bytes_per_s();
    m.limits = arch_limits(arch);
    return m;
}

PlanningGpu planning_gpu(Arch arch) {
    // Newest arch first; every GPU is one of the built-in roofline specs.
    static const PlanningGpu gpus[] = {{"H200", 90, 132}, {"RTX 3090", 86, 82}, {"A100-80GB", 80, 108}, {"T4", 75, 40}};
    for (const PlanningGpu& g : gpus)
        if (arch.sm >= g.sm) return g;
    throw Error(arch.name() + " is older than any GPU the planner knows (sm_75 and up)");
}

DeviceModel planning_model(Arch arch) {
    const PlanningGpu gpu = planning_gpu(arch);
    return planning_model(gpu.name, gpu.sm_count, arch);
}

}  // namespace sgemm
