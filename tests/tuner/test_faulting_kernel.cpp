// The planted faulting kernels (faulting_kernel.h) are built on the CPU, so that a machine
// without a GPU sees one that no longer compiles: the GPU tests that run them skip there.
#include <gtest/gtest.h>

#include <utility>

#include "db/store.h"
#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/records/kernel_records.h"
#include "tests/db/fixture.h"
#include "tests/tuner/faulting_kernel.h"

using namespace sgemm;
using sgemm::testing::FaultsOn;
using sgemm::testing::TempDir;

namespace {

// Each kind takes the place of naive's default configuration in the binary cache, where a
// tune looks for that candidate's build, with a cubin of its own.
TEST(FaultingKernel, EachKindIsPlantedAsTheBinaryOfNaivesDefaultConfiguration) {
    const Family& naive = find_family("naive");
    const Arch arch{90};
    const std::vector<char> naives_own = compile_kernel(naive, naive.defaults, arch).cubin;
    std::vector<std::vector<char>> planted;
    // The kernel that faults once checked counts the check's runs, which depend on the layout.
    for (const auto& [when, runs] : {std::pair{FaultsOn::first_run, 0}, std::pair{FaultsOn::after_the_check, 4},
                                     std::pair{FaultsOn::after_the_check, 6}}) {
        const TempDir dir;
        const std::string path = dir.file("tuning.db");
        EXPECT_EQ(plant_a_kernel_that_faults(path, arch, when, runs), kernel_ref(naive, naive.defaults));
        const std::optional<Binary> binary =
            TuningStore(path).find_binary(kernel_cache_key(naive, naive.defaults, arch));
        ASSERT_TRUE(binary.has_value());
        EXPECT_EQ(binary->lowered_name, "faults");
        EXPECT_FALSE(binary->cubin.empty());
        EXPECT_NE(binary->cubin, naives_own);
        planted.push_back(binary->cubin);
    }
    EXPECT_NE(planted[0], planted[1]);
    EXPECT_NE(planted[1], planted[2]);
}

}  // namespace
