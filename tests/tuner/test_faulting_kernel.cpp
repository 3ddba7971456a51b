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
    // The kernel that faults once checked counts the check's runs, which depend on the layout;
    // the one that faults once released holds its flag's address (here never run).
    const int flags[2] = {0, 0};
    struct Kind {
        FaultsOn when;
        int runs;
        const int* flag;
    };
    for (const Kind& kind : {Kind{FaultsOn::first_run, 0, nullptr}, Kind{FaultsOn::after_the_check, 4, nullptr},
                             Kind{FaultsOn::after_the_check, 6, nullptr}, Kind{FaultsOn::once_released, 0, &flags[0]},
                             Kind{FaultsOn::once_released, 0, &flags[1]}}) {
        const TempDir dir;
        const std::string path = dir.file("tuning.db");
        EXPECT_EQ(plant_a_kernel_that_faults(path, arch, kind.when, kind.runs, {}, kind.flag),
                  kernel_ref(naive, naive.defaults));
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
    EXPECT_NE(planted[2], planted[3]);
    EXPECT_NE(planted[3], planted[4]) << "the flag's address is not in the binary";
    // Without a flag there is nothing to release it by.
    const TempDir dir;
    EXPECT_THROW(plant_a_kernel_that_faults(dir.file("tuning.db"), arch, FaultsOn::once_released, 0), Error);
}

}  // namespace
