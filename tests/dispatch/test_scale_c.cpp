// The kernel that scales C alone (K or alpha 0): it compiles for the families' architectures
// (sm_80 and sm_90) without spills, and what ScaleC launches for each beta, where that needs no GPU.
#include <gtest/gtest.h>

#include <limits>

#include "src/dispatch/scale_c.h"

using namespace sgemm;

TEST(ScaleC, TheKernelCompilesForTheFamiliesArchsWithoutSpills) {
    for (const int sm : {80, 90}) {
        SCOPED_TRACE("sm_" + std::to_string(sm));
        const StandaloneKernel k = compile_scale_c(Arch{sm});
        EXPECT_FALSE(k.cubin.empty());
        ASSERT_TRUE(k.ptxas.found);
        EXPECT_FALSE(k.ptxas.spills());
        EXPECT_EQ(k.ptxas.stack_bytes, 0);
    }
}

TEST(ScaleC, OnlyABetaOtherThanZeroAndOneNeedsTheKernel) {
    EXPECT_FALSE(ScaleC::needs_kernel(1.0f));
    EXPECT_FALSE(ScaleC::needs_kernel(0.0f));
    EXPECT_FALSE(ScaleC::needs_kernel(-0.0f));
    EXPECT_TRUE(ScaleC::needs_kernel(0.5f));
    EXPECT_TRUE(ScaleC::needs_kernel(-1.0f));
    EXPECT_TRUE(ScaleC::needs_kernel(std::numeric_limits<float>::quiet_NaN()));
}

// NVRTC's refusal (a GPU it cannot target) is kept: later loads throw it again without
// compiling, where each try would hold every other caller for some 80 ms. Other failures are
// tried again. Neither compile reaches CUDA, so no GPU is needed.
TEST(ScaleC, ACompileErrorIsKeptAndNotTriedAgain) {
    int compiles = 0;
    ScaleC refused([&](Arch arch) -> StandaloneKernel {
        ++compiles;
        throw CompileError("sm_" + std::to_string(arch.sm) + " is no target of this NVRTC");
    });
    for (int attempt = 0; attempt < 3; ++attempt) {
        try {
            refused.load(Arch{70});
            ADD_FAILURE() << "a refused compile loaded";
        } catch (const CompileError& e) {
            EXPECT_STREQ(e.what(), "sm_70 is no target of this NVRTC");
        }
    }
    EXPECT_EQ(compiles, 1);
    EXPECT_FALSE(refused.loaded());

    int tries = 0;
    ScaleC failing([&](Arch) -> StandaloneKernel {
        ++tries;
        throw Error("NVRTC: out of memory");
    });
    for (int attempt = 0; attempt < 2; ++attempt) EXPECT_THROW(failing.load(Arch{90}), Error);
    EXPECT_EQ(tries, 2);
}

TEST(ScaleC, BetaOfOneEnqueuesNothingAndAnUnloadedKernelIsAnErrorNotALaunch) {
    // Neither reaches CUDA, so neither needs a GPU: C is never touched (nullptr here).
    const ScaleC scale;
    EXPECT_FALSE(scale.loaded());
    EXPECT_EQ(scale.launch(3, 5, 1.0f, nullptr, 5, nullptr), cudaSuccess);
    EXPECT_EQ(scale.launch(3, 5, 0.5f, nullptr, 5, nullptr), cudaErrorInvalidResourceHandle);
}
