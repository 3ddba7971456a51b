// Samples of a tuned family's binaries for tests that compile without a GPU: which
// configurations are distinct binaries, an even spread of them, and the check that one
// compiles without spilling.
#pragma once
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "src/families/registry.h"
#include "src/jit/compiler.h"

namespace sgemm::testing {

// One configuration per distinct binary valid on `arch` (configurations that differ only
// in their split count share binaries: the template sees only whether it exceeds 1; a
// stream-K tail or a sum pass adds a kernel, so it makes another binary).
inline std::vector<ParamValues> distinct_binaries(const Family& f, Arch arch) {
    std::vector<ParamValues> out;
    std::set<std::string> seen;
    for (const ParamValues& v : f.valid_configs(arch))
        if (seen.insert(f.name_expression(v) + " " + f.second_name_expression(v)).second) out.push_back(v);
    return out;
}

// `count` entries of `list` spread evenly: the middles of `count` equal parts.
inline std::vector<ParamValues> spread_sample(const std::vector<ParamValues>& list, std::size_t count) {
    std::vector<ParamValues> out;
    for (std::size_t i = 0; i < count && !list.empty(); ++i) out.push_back(list[(2 * i + 1) * list.size() / (2 * count)]);
    return out;
}

// Compiles `values` for `arch` through NVRTC: ptxas must report its figures and no spills.
inline void expect_compiles_without_spills(const Family& f, const ParamValues& values, Arch arch) {
    SCOPED_TRACE(f.describe(values) + " for " + arch.name());
    const CompiledKernel k = compile_kernel(f, values, arch);
    ASSERT_TRUE(k.ptxas.found) << k.log;
    EXPECT_FALSE(k.ptxas.spills()) << k.log;
    EXPECT_LE(k.ptxas.registers, 255);
}

}  // namespace sgemm::testing
