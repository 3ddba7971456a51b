// What create's kernel set says when it cannot compile, checked without a GPU: every compile
// it needs runs before any kernel is loaded.
#include <gtest/gtest.h>

#include "src/dispatch/kernel_set.h"
#include "src/dispatch/status_error.h"
#include "src/families/registry.h"
#include "src/records/kernel_records.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using sgemm::testing::h200;
using sgemm::testing::shape;

namespace {

// The status and message of KernelSet(catalog, with_builtin) when it throws StatusError.
std::pair<sgemm_dispatch_status_t, std::string> refusal_of(const Catalog& catalog, bool with_builtin) {
    try {
        KernelSet set(catalog, with_builtin, nullptr);
    } catch (const StatusError& e) {
        return {e.status, e.what()};
    }
    return {SGEMM_DISPATCH_SUCCESS, "it did not throw"};
}

}  // namespace

// A GPU no compile target covers (newer than this NVRTC) is said so, in the words sgemm-tune
// uses, not NVRTC's "invalid value for --gpu-architecture".
TEST(KernelSet, AGpuThatIsNoCompileTargetIsSaidSo) {
    Catalog catalog;
    catalog.device = h200();
    catalog.device.cc_major = 9, catalog.device.cc_minor = 9;
    const auto [status, what] = refusal_of(catalog, true);
    EXPECT_EQ(status, SGEMM_DISPATCH_COMPILE_ERROR) << what;
    EXPECT_NE(what.find("the built-in kernel is not in the binary cache): sm_99 is not a compile target"),
              std::string::npos)
        << what;
}

// Every compile that fails is named, not only the last one.
TEST(KernelSet, EveryCompileThatFailsIsNamed) {
    Catalog catalog;
    catalog.device = h200();
    const Family& naive = find_family("naive");
    for (int block_y : {3, 5}) {  // no value of naive's BLOCK_Y: refused before NVRTC runs
        Winner w;
        w.kernel = kernel_ref(naive, {32, block_y});
        w.shape = shape(8, 64, 64);
        w.binary_key = "missing-" + std::to_string(block_y);
        catalog.unusable_binaries[w.binary_key] = "missing from the binary cache";
        catalog.winners.push_back(w);
    }
    const auto [status, what] = refusal_of(catalog, false);
    EXPECT_EQ(status, SGEMM_DISPATCH_COMPILE_ERROR) << what;
    EXPECT_NE(what.find("compiling naive BLOCK_X=32 BLOCK_Y=3 (missing from the binary cache): "), std::string::npos)
        << what;
    EXPECT_NE(what.find("\ncompiling naive BLOCK_X=32 BLOCK_Y=5 (missing from the binary cache): "), std::string::npos)
        << what;
}
