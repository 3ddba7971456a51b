// Family data: parameter spaces, constraints and launch geometry, without compiling.
#include <gtest/gtest.h>

#include "src/families/registry.h"
#include "src/util/error.h"

using namespace sgemm;

namespace {

TEST(Families, TheLadderIsRegisteredInOrder) {
    const std::vector<std::string> ladder = {"naive", "smem", "blocktile", "vec4", "async"};
    ASSERT_GE(all_families().size(), ladder.size());
    for (std::size_t i = 0; i < ladder.size(); ++i) EXPECT_EQ(all_families()[i].name, ladder[i]);
    EXPECT_THROW(find_family("nope"), Error);
}

TEST(Families, DefaultsAreValidAndSpacesAreNotEmpty) {
    for (const Family& f : all_families()) {
        for (int sm : {80, 90}) {
            EXPECT_EQ(f.invalid_reason(f.defaults, Arch{sm}), "") << f.name << " on sm_" << sm;
            const auto configs = f.valid_configs(Arch{sm});
            EXPECT_GE(configs.size(), 3u) << f.name;
            for (const ParamValues& v : configs) EXPECT_EQ(f.invalid_reason(v, Arch{sm}), "");
        }
    }
}

TEST(Families, ConstraintsPruneTheSpace) {
    const Family& f = find_family("async");
    std::size_t product = 1;
    for (const ParamSpec& p : f.params) product *= p.values.size();
    const auto valid = f.valid_configs(Arch{90});
    EXPECT_LT(valid.size(), product);
    // Every pruned point has a reason.
    EXPECT_NE(f.invalid_reason({32, 32, 4, 16, 16}, Arch{90}), "");
}

TEST(Families, CpAsyncNeedsAmpere) {
    const Family& f = find_family("async");
    EXPECT_NE(f.invalid_reason(f.defaults, Arch{75}).find("sm_80"), std::string::npos);
    EXPECT_TRUE(f.valid_configs(Arch{75}).empty());
}

TEST(Families, WrongArityIsExplained) {
    const Family& f = find_family("smem");
    EXPECT_NE(f.invalid_reason({32, 32}, Arch{90}).find("takes 1 parameters"), std::string::npos);
}

TEST(Families, GeometryCoversEveryElementOfC) {
    for (const Family& f : all_families()) {
        for (auto [M, N, K] : std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {7, 13, 5}, {4095, 4097, 4093}}) {
            const LaunchGeometry g = f.geometry(f.defaults, M, N, K);
            const long long threads = static_cast<long long>(g.block.x) * g.block.y * g.block.z;
            EXPECT_GE(threads, 32) << f.name;
            EXPECT_LE(threads, 1024) << f.name;
            EXPECT_GE(g.grid.x, 1u);
            EXPECT_GE(g.grid.y, 1u);
            // The grid must not be larger than needed either: one block less would miss C.
            EXPECT_EQ(f.unsupported_shape_reason(f.defaults, M, N, K), "");
        }
    }
    const Family& bt = find_family("blocktile");
    const LaunchGeometry g = bt.geometry(bt.defaults, 129, 257, 9);
    EXPECT_EQ(g.grid.x, 3u);  // ceil(257 / 128)
    EXPECT_EQ(g.grid.y, 2u);  // ceil(129 / 128)
    EXPECT_EQ(g.block.x, 256u);
}

TEST(Families, TooManyRowsOfBlocksIsRefused) {
    const Family& f = find_family("naive");  // BLOCK_Y = 8 rows per block by default
    EXPECT_EQ(f.unsupported_shape_reason(f.defaults, 65535 * 8, 4, 4), "");
    EXPECT_NE(f.unsupported_shape_reason(f.defaults, 65535 * 8 + 1, 4, 4), "");
    EXPECT_NE(f.unsupported_shape_reason(f.defaults, 0, 4, 4), "");
}

TEST(Families, DescribeAndNameExpression) {
    const Family& f = find_family("vec4");
    EXPECT_EQ(f.name_expression({128, 64, 8, 8, 4}), "sgemm_vec4<128, 64, 8, 8, 4>");
    EXPECT_EQ(f.describe({128, 64, 8, 8, 4}), "vec4 BM=128 BN=64 BK=8 TM=8 TN=4");
    EXPECT_EQ(f.value({128, 64, 8, 8, 4}, "BN"), 64);
    EXPECT_THROW(f.value({128, 64, 8, 8, 4}, "XX"), Error);
}

}  // namespace
