// The instruction-cache evictor off the GPU: it compiles for sm_80 and sm_90, without
// spills, to more code than an SM caches. (That it leaves every SM cold is checked on the
// GPU in tests/gpu/test_timing.cpp.)
#include <gtest/gtest.h>

#include "tuner/instruction_cache_evictor.h"

using namespace sgemm;

class InstructionCacheEvictorBuild : public ::testing::TestWithParam<int> {};

TEST_P(InstructionCacheEvictorBuild, CompilesToMoreCodeThanAnSmCaches) {
    const StandaloneKernel k = compile_instruction_cache_evictor(Arch{GetParam()});
    ASSERT_TRUE(k.ptxas.found);
    EXPECT_FALSE(k.ptxas.spills()) << k.ptxas.spill_store_bytes << " bytes of spill stores";
    EXPECT_GE(k.cubin.size(), kEvictorMinimumCodeBytes);
}

INSTANTIATE_TEST_SUITE_P(Archs, InstructionCacheEvictorBuild, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });
