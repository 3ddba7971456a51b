#include "src/jit/arch.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>

#include "src/cuda/check.h"
#include "src/jit/compiler.h"
#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

Arch parse_arch(const std::string& text) {
    const std::string name = chosen_word(text);  // SM_90 as well
    const bool prefixed = name.rfind("sm_", 0) == 0;
    std::string digits = prefixed ? name.substr(3) : name;
    // X.Y (a compute capability, as nvidia-smi prints it): one dot, one digit after it, and
    // no sm_ before it; "9..0" or "1.2.3" read as sm_90 and sm_123.
    if (const std::size_t dot = digits.find('.'); dot != std::string::npos && !prefixed && dot > 0 &&
                                                  dot + 2 == digits.size())
        digits.erase(dot, 1);
    bool ok = digits.size() >= 2 && digits.size() <= 3;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    if (!ok)
        throw Error("invalid architecture " + single_quoted(text) + ": expected sm_XY, XY or X.Y, e.g. sm_90");
    const Arch arch{std::stoi(digits)};
    if (const std::string why = unsupported_arch_reason(arch); !why.empty()) throw Error(why);
    return arch;
}

const std::vector<int>& compile_targets() {
    static const std::vector<int> targets = [] {
        int count = 0;
        SGEMM_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&count));
        std::vector<int> nvrtc(static_cast<std::size_t>(count));
        SGEMM_NVRTC_CHECK(nvrtcGetSupportedArchs(nvrtc.data()));
        std::vector<int> out;
        for (int sm : nvrtc)
            if (sm >= 70) out.push_back(sm);
        std::sort(out.begin(), out.end());
        return out;
    }();
    return targets;
}

std::string unsupported_arch_reason(Arch arch) {
    const std::vector<int>& targets = compile_targets();
    if (std::find(targets.begin(), targets.end(), arch.sm) != targets.end()) return "";
    std::string list;
    for (int sm : targets) list += (list.empty() ? "" : ", ") + Arch{sm}.name();
    return arch.name() + " is not a compile target: with NVRTC " + nvrtc_version() + " this build compiles for " +
           list;
}

Arch compile_target_of(const DeviceInfo& device) {
    const Arch arch{device.sm()};
    if (const std::string why = unsupported_arch_reason(arch); !why.empty()) throw Error(device.name + ": " + why);
    return arch;
}

ArchLimits arch_limits(Arch arch) {
    ArchLimits l;
    l.sm = arch.sm;
    switch (arch.sm) {
        case 70: case 72: l.max_shared_per_block = 96 * 1024; l.shared_per_sm = 96 * 1024; break;
        case 75: l.max_shared_per_block = 64 * 1024; l.shared_per_sm = 64 * 1024; l.max_threads_per_sm = 1024; break;
        case 80: case 87: l.max_shared_per_block = 163 * 1024; l.shared_per_sm = 164 * 1024; break;
        case 86: case 89: l.max_shared_per_block = 99 * 1024; l.shared_per_sm = 100 * 1024; l.max_threads_per_sm = 1536; break;
        case 90: case 100: case 103: l.max_shared_per_block = 227 * 1024; l.shared_per_sm = 228 * 1024; break;
        default: l.max_shared_per_block = 99 * 1024; l.shared_per_sm = 100 * 1024; l.max_threads_per_sm = 1536; break;
    }
    return l;
}

}  // namespace sgemm
