// A compile target (sm_XY) and the per-block limits a kernel configuration must respect
// on it. With a GPU the target is read off the device; without one it is named.
#pragma once
#include <string>
#include <vector>

#include "src/cuda/device.h"

namespace sgemm {

struct Arch {
    int sm = 0;  // 90 for sm_90

    std::string name() const { return "sm_" + std::to_string(sm); }
};

// Parses "sm_90", "90" or "9.0"; throws sgemm::Error naming the accepted forms, or naming
// the compile targets when it is not one of them.
Arch parse_arch(const std::string& text);

// The architectures this build compiles for, ascending: those this process's NVRTC
// supports (nvrtcGetSupportedArchs; CUDA 13 dropped sm_70 and sm_72, CUDA 12 still has
// sm_50 on), from sm_70, where the limits below and the families' constraints start.
const std::vector<int>& compile_targets();

// "" when `arch` is a compile target; else why not, naming the targets.
std::string unsupported_arch_reason(Arch arch);

// The compile target of a GPU; throws sgemm::Error naming the GPU and the targets when its
// architecture is not one.
Arch compile_target_of(const DeviceInfo& device);

struct ArchLimits {
    int sm = 0;  // the architecture they describe, as in Arch
    int max_threads_per_block = 1024;
    int max_registers_per_thread = 255;
    int registers_per_sm = 65536;
    int max_threads_per_sm = 2048;
    int static_shared_per_block = 48 * 1024;  // without opt-in
    int max_shared_per_block = 48 * 1024;     // with cudaFuncAttributeMaxDynamicSharedMemorySize
    int shared_per_sm = 64 * 1024;
};

// Published per-architecture limits (CUDA Programming Guide, compute capabilities table).
ArchLimits arch_limits(Arch arch);

}  // namespace sgemm
