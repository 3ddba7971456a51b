// Family data: parameter spaces, constraints and launch geometry, without compiling.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include "src/families/registry.h"
#include "src/util/error.h"
#include "templates/sgemm_common.cuh"

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

// A swappable pair (Family::swappable_params) names two parameters of the family that share
// values to trade; an unknown name is an error, not a pair that silently never moves.
TEST(Families, SwappableParametersExistAndShareValues) {
    for (const Family& f : all_families())
        for (const auto& [first, second] : f.swappable_params) {
            const auto& a = f.params.at(f.param_index(first)).values;
            const auto& b = f.params.at(f.param_index(second)).values;
            EXPECT_TRUE(std::any_of(a.begin(), a.end(), [&](int v) { return std::count(b.begin(), b.end(), v) > 0; }))
                << f.name << ": " << first << " and " << second;
        }
    EXPECT_THROW(find_family("warptile").param_index("TK"), Error);
    EXPECT_EQ(find_family("warptile").param_index("TN"), 6u);
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

// A database row edited by hand can carry values no kernel has: a size of 0 would be divided
// by, and tiles of warps larger than the block make blocks of no threads. Both are reasons,
// not crashes, for every family; values off the lists but sound are not refused here.
TEST(Families, SizesBelowOneAndEmptyBlocksAreReasonsNotCrashes) {
    for (const Family& f : all_families()) {
        for (std::size_t i = 0; i < f.params.size(); ++i) {
            const std::vector<int>& allowed = f.params[i].values;
            if (*std::min_element(allowed.begin(), allowed.end()) < 1) continue;  // a flag: 0 is a value
            for (int bad : {0, -4}) {
                ParamValues v = f.defaults;
                v[i] = bad;
                EXPECT_NE(f.unsupported_shape_reason(v, 64, 64, 64, Arch{90}).find(f.params[i].name + "=" + std::to_string(bad)),
                          std::string::npos)
                    << f.name;
            }
        }
    }
    const Family& w = find_family("warptile");
    ParamValues wide_warps = w.defaults;  // BM 256 with WM 512: no warp fits the block tile
    wide_warps[w.param_index("WM")] = 512;
    EXPECT_NE(w.unsupported_shape_reason(wide_warps, 64, 64, 64, Arch{90}).find("blocks of 0 threads"), std::string::npos);
    ParamValues off_list = w.defaults;  // BK 24 is in no list, yet a kernel could have it
    off_list[w.param_index("BK")] = 24;
    EXPECT_EQ(w.unsupported_shape_reason(off_list, 64, 64, 64, Arch{90}), "");
}

// Blocks of `tile` along `extent`: enough to cover it, and none wholly past it.
::testing::AssertionResult tiles_cover(unsigned blocks, int tile, int extent) {
    if (static_cast<long long>(blocks) * tile >= extent && static_cast<long long>(blocks - 1) * tile < extent)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << blocks << " blocks of " << tile << " for " << extent;
}

// Every family's grid at its defaults covers C at odd sizes, by each family's own tiling:
// naive and smem tile C by their blocks, the other rungs by BM x BN, decode by MT rows (grid.x)
// and BN columns (grid.z), warptile by BM x BN tiles numbered along grid.x (of C^T with CT).
TEST(Families, GeometryCoversEveryElementOfC) {
    const std::vector<std::tuple<int, int, int>> sizes = {{1, 1, 1}, {7, 13, 5}, {17, 1000, 7}, {1000, 17, 33},
                                                          {4095, 4097, 4093}};
    for (const Family& f : all_families()) {
        for (auto [M, N, K] : sizes) {
            SCOPED_TRACE(f.name + " M=" + std::to_string(M) + " N=" + std::to_string(N));
            const LaunchGeometry g = f.geometry(f.defaults, M, N, K);
            const long long threads = static_cast<long long>(g.block.x) * g.block.y * g.block.z;
            EXPECT_GE(threads, 32);
            EXPECT_LE(threads, 1024);
            EXPECT_EQ(f.unsupported_shape_reason(f.defaults, M, N, K, Arch{90}), "");
            const auto value = [&](const char* name) { return f.value(f.defaults, name); };
            if (f.name == "naive") {
                EXPECT_TRUE(tiles_cover(g.grid.x, value("BLOCK_X"), N));
                EXPECT_TRUE(tiles_cover(g.grid.y, value("BLOCK_Y"), M));
            } else if (f.name == "smem") {
                EXPECT_TRUE(tiles_cover(g.grid.x, value("TILE"), N));
                EXPECT_TRUE(tiles_cover(g.grid.y, value("TILE"), M));
            } else if (f.name == "decode") {
                EXPECT_TRUE(tiles_cover(g.grid.x, value("MT"), M));
                EXPECT_TRUE(tiles_cover(g.grid.z, value("BN"), N));
            } else if (f.name == "warptile") {
                const long long bm = value("BM"), bn = value("BN");
                EXPECT_EQ(g.grid.x, ((M + bm - 1) / bm) * ((N + bn - 1) / bn));
                ParamValues transposed = f.defaults;  // CT: the tiles are C^T's
                transposed[f.param_index("CT")] = 1;
                EXPECT_EQ(f.geometry(transposed, M, N, K).grid.x, ((N + bm - 1) / bm) * ((M + bn - 1) / bn));
            } else {
                EXPECT_TRUE(tiles_cover(g.grid.x, value("BN"), N));
                EXPECT_TRUE(tiles_cover(g.grid.y, value("BM"), M));
            }
        }
    }
}

TEST(Families, TooManyRowsOfBlocksIsRefused) {
    const Family& f = find_family("naive");  // BLOCK_Y = 8 rows per block by default
    EXPECT_EQ(f.unsupported_shape_reason(f.defaults, 65535 * 8, 4, 4, Arch{90}), "");
    EXPECT_NE(f.unsupported_shape_reason(f.defaults, 65535 * 8 + 1, 4, 4, Arch{90}), "");
    EXPECT_NE(f.unsupported_shape_reason(f.defaults, 0, 4, 4, Arch{90}), "");
}

// Sizes near 2^31: the tile counts are exact (int arithmetic overflowed: the built-in kernel's
// grid for M = 2^31 - 1 came out as 4286578689 blocks), and a grid past CUDA's 2^31 - 1
// blocks in x is a reason, not a wrapped count.
TEST(Families, GridsNearTwoToThe31AreExactOrRefused) {
    const Family& w = find_family("warptile");  // defaults: 256 x 128 tiles, the built-in kernel
    EXPECT_EQ(w.geometry(w.defaults, INT_MAX, 1, 1).grid.x, 8388608u);  // ceil((2^31 - 1) / 256)
    EXPECT_EQ(w.unsupported_shape_reason(w.defaults, INT_MAX, 1, 1, Arch{90}), "");
    // 2^23 x 2^24 tiles of C: 2^47 blocks.
    EXPECT_NE(w.unsupported_shape_reason(w.defaults, INT_MAX, INT_MAX, 1, Arch{90}).find("more than 2^31 - 1 blocks"),
              std::string::npos);
    const Family& d = find_family("decode");
    const ParamValues one_row = {1, 32, 16, 1, 1, 0, 1, 0, 0};
    EXPECT_EQ(d.geometry(one_row, INT_MAX, 64, 64).grid.x, static_cast<unsigned>(INT_MAX));
    const Family& naive = find_family("naive");  // 32 columns a block
    EXPECT_EQ(naive.geometry(naive.defaults, 1, INT_MAX, 1).grid.x, 67108864u);  // ceil((2^31 - 1) / 32)
}

TEST(Families, DecodeGeometryAndWorkspace) {
    const Family& f = find_family("decode");
    // MT=8 rows, BN=128 columns, KW=8 groups of 32 threads, UNROLL=2, EF=1, B stored K x N
    // (TB=0), 4 slices of K.
    const ParamValues v = {8, 128, 8, 2, 1, 0, 4, 0, 0};
    const LaunchGeometry g = f.geometry(v, 20, 1000, 4093);
    EXPECT_EQ(g.grid.x, 3u);   // ceil(20 / 8) row tiles, the fastest dimension
    EXPECT_EQ(g.grid.y, 4u);   // the K slices
    EXPECT_EQ(g.grid.z, 8u);   // ceil(1000 / 128) column tiles
    EXPECT_EQ(g.block.x, 256u);
    // A's slice: 8 rows x 1024 k (ceil(4093 / 4) = 1024, a multiple of 4) floats.
    EXPECT_EQ(g.dynamic_shared_bytes, 4u * 8 * 1024);
    // The fixed counter region, then 4 partial 20 x 1000 results.
    EXPECT_EQ(f.workspace_bytes(v, 20, 1000, 4093, 132, 16), SGEMM_WORKSPACE_COUNTER_BYTES + 4u * 4 * 20 * 1000);
    EXPECT_EQ(f.workspace_bytes({8, 128, 8, 2, 1, 0, 1, 0, 0}, 20, 1000, 4093, 132, 16), 0u);
    EXPECT_EQ(find_family("async").workspace_bytes(find_family("async").defaults, 20, 1000, 4093, 132, 16), 0u);
}

// With a ring, B's batches sit in shared memory after A's slice, and a thread holds one batch
// in registers instead of two.
// SUM_PASS = 1 leaves the sum of the slices to a second kernel, sgemm_decode_sum_pass, with
// the same template arguments; it needs 2 to 16 slices (SGEMM_SUM_PASS_MAX_SLICES), and its
// launch has a row of SGEMM_SUM_PASS_QUADS threads per slice (the grid's y).
TEST(Families, DecodeSumPass) {
    const Family& f = find_family("decode");
    const ParamValues v = {8, 128, 8, 4, 1, 0, 4, 0, 1};
    EXPECT_EQ(f.invalid_reason(v, Arch{90}), "");
    EXPECT_TRUE(f.has_sum_pass(v));
    EXPECT_EQ(f.second_name_expression(v), "sgemm_decode_sum_pass<8, 128, 8, 4, 1, 0, true, 0, 1>");
    const LaunchGeometry pass = f.second_geometry(v, 8, 4096, 4096, 132, 16);
    EXPECT_EQ(pass.grid.x, 8u * 4096 / 4 / SGEMM_SUM_PASS_QUADS);
    EXPECT_EQ(pass.block.y, 4u);
    EXPECT_EQ(f.workspace_bytes(v, 8, 4096, 4096, 132, 16), sgemm_splitk_workspace_bytes(4, 8, 4096));
    for (int splits : {1, 24, 32}) {
        ParamValues other = v;
        other[6] = splits;
        EXPECT_NE(f.invalid_reason(other, Arch{90}).find("SPLITS from 2 to 16"), std::string::npos) << splits;
    }
    ParamValues sixteen = v;
    sixteen[6] = 16;
    EXPECT_EQ(f.invalid_reason(sixteen, Arch{90}), "");
    EXPECT_EQ(f.second_geometry(sixteen, 8, 4096, 4096, 132, 16).block.y, 16u);
}

TEST(Families, DecodeRingOfBSharesMemoryWithA) {
    const Family& f = find_family("decode");
    // 8 rows, 128 columns, 8 groups (256 threads), UNROLL 2, B stored N x K, 4 slices, a ring
    // of 3 batches: 3 x 2 quads x 16 floats for each of 256 threads.
    const ParamValues ring = {8, 128, 8, 2, 1, 1, 4, 3, 0};
    EXPECT_EQ(f.geometry(ring, 20, 1000, 4093).dynamic_shared_bytes, 4u * (8 * 1024 + 3 * 2 * 16 * 256));
    ParamValues registers = ring;
    registers[f.param_index("RING")] = 0;
    EXPECT_EQ(f.geometry(registers, 20, 1000, 4093).dynamic_shared_bytes, 4u * 8 * 1024);
    EXPECT_EQ(f.estimated_registers(registers) - f.estimated_registers(ring), 2 * 16);
    EXPECT_EQ(f.invalid_reason(ring, Arch{90}), "");
    EXPECT_EQ(f.invalid_reason(ring, Arch{80}), "");
}

// The ring is filled by cp.async (sm_80+), serves B stored either way, and must leave room
// for A.
TEST(Families, DecodeRingOnlyWhereItCanRunAndPays) {
    const Family& f = find_family("decode");
    EXPECT_NE(f.invalid_reason({8, 128, 8, 1, 1, 1, 4, 3, 0}, Arch{75}).find("cp.async"), std::string::npos);
    EXPECT_NE(f.invalid_reason({8, 128, 8, 1, 1, 0, 4, 3, 0}, Arch{75}).find("cp.async"), std::string::npos);
    // 8 rows in a 64-column strip with 32 groups along k (512 threads), B stored K x N:
    // two batches of 2 quads in registers do not fit one SM; one batch in registers and the
    // rest in a ring do.
    EXPECT_NE(f.invalid_reason({8, 64, 32, 2, 1, 0, 1, 0, 0}, Arch{90}).find("do not fit one SM"), std::string::npos);
    EXPECT_EQ(f.invalid_reason({8, 64, 32, 2, 1, 0, 1, 3, 0}, Arch{90}), "");
    EXPECT_EQ(f.invalid_reason({8, 64, 32, 1, 1, 0, 1, 3, 0}, Arch{80}), "");
    EXPECT_NE(f.invalid_reason({16, 128, 4, 1, 1, 1, 4, 3, 0}, Arch{90}).find("up to 8 rows"), std::string::npos);
    // 6 batches of 2 quads for 512 threads: 384 KB.
    EXPECT_NE(f.invalid_reason({1, 256, 8, 2, 1, 1, 4, 6, 0}, Arch{90}).find("no shared memory for A"), std::string::npos);
    EXPECT_EQ(f.invalid_reason({1, 256, 8, 1, 1, 1, 4, 6, 0}, Arch{90}), "");
    // Where ptxas spilled ring binaries: UNROLL 4, and 1 or 2 groups along k.
    EXPECT_NE(f.invalid_reason({4, 64, 16, 4, 1, 1, 1, 3, 0}, Arch{90}).find("UNROLL <= 2 and KW >= 4"), std::string::npos);
    EXPECT_NE(f.invalid_reason({8, 64, 2, 2, 1, 1, 1, 6, 0}, Arch{90}).find("UNROLL <= 2 and KW >= 4"), std::string::npos);
    EXPECT_EQ(f.invalid_reason({4, 64, 16, 2, 1, 1, 1, 3, 0}, Arch{90}), "");
    // A slice of A that fits alone may not fit beside the ring.
    EXPECT_EQ(f.unsupported_shape_reason({8, 128, 8, 1, 1, 1, 1, 0, 0}, 8, 4096, 7168, Arch{90}), "");
    EXPECT_NE(f.unsupported_shape_reason({8, 128, 8, 1, 1, 1, 1, 6, 0}, 8, 4096, 7168, Arch{90}).find("shared memory"),
              std::string::npos);
}

TEST(Families, SharedMemoryThatOutgrowsTheArchIsRefused) {
    const Family& f = find_family("decode");
    // 32 rows x all of K=14336 in one slice: 1.8 MB of A.
    EXPECT_NE(f.unsupported_shape_reason({32, 128, 8, 1, 1, 0, 1, 0, 0}, 32, 4096, 14336, Arch{90}).find("shared memory"),
              std::string::npos);
    EXPECT_EQ(f.unsupported_shape_reason({32, 128, 8, 1, 1, 0, 16, 0, 0}, 32, 4096, 14336, Arch{90}), "");
    // Slices of A past 2^31 bytes, and of 2^32 and 2^33 exactly, which int arithmetic wrapped
    // to sizes that fit (a few KB, 0): refused, at every K past the first that does not fit.
    for (const int K : {3 << 23, 1 << 25, 1 << 26, INT_MAX})
        for (const int rows : {8, 16, 32}) {
            const std::string why = f.unsupported_shape_reason({rows, 128, 8, 1, 1, 0, 1, 0, 0}, 1, 8, K, Arch{90});
            EXPECT_NE(why.find("shared memory"), std::string::npos) << rows << " rows, K=" << K << ": " << why;
        }
}

TEST(Families, DecodeBlocksThatCannotHoldTheirRegistersAreRefused) {
    const Family& f = find_family("decode");
    // 1024 threads leave 64 registers a thread: ptxas spills every such block.
    EXPECT_NE(f.invalid_reason({1, 256, 16, 1, 1, 0, 1, 0, 0}, Arch{90}).find("do not fit one SM"), std::string::npos);
    // 512 threads leave 128: 8 rows with two batches of 2 quads need about 136.
    EXPECT_NE(f.invalid_reason({8, 128, 16, 2, 1, 0, 1, 0, 0}, Arch{90}).find("do not fit one SM"), std::string::npos);
    EXPECT_EQ(f.invalid_reason({4, 128, 16, 2, 1, 0, 1, 0, 0}, Arch{90}), "");
}

// The decode binaries ptxas spills on sm_80 (and sm_75) are not in the space there; on the
// other targets they are.
TEST(Families, DecodeBlocksThatSpillOnSm80AreRefusedThere) {
    const Family& f = find_family("decode");
    std::vector<ParamValues> spilling;
    for (int ef : {0, 1}) {
        for (int tb : {0, 1}) spilling.push_back({8, 64, 2, 2, ef, tb, 2, 0, 0});  // one warp, UNROLL 2
        for (int bn : {128, 256}) spilling.push_back({8, bn, 2, 1, ef, 1, 2, 0, 0});  // TB, 2 groups, UNROLL 1
    }
    for (const ParamValues& v : spilling) {
        EXPECT_NE(f.invalid_reason(v, Arch{80}).find("spill on sm_75 and sm_80"), std::string::npos) << f.describe(v);
        EXPECT_NE(f.invalid_reason(v, Arch{75}).find("spill on sm_75 and sm_80"), std::string::npos) << f.describe(v);
        EXPECT_EQ(f.invalid_reason(v, Arch{86}), "");
        EXPECT_EQ(f.invalid_reason(v, Arch{90}), "");
    }
    // The same blocks without split-K, with UNROLL 1, of 4 rows, of 64 columns, or with B
    // stored K x N, stay.
    for (const ParamValues& v : {ParamValues{8, 64, 2, 2, 1, 0, 1, 0, 0}, ParamValues{8, 64, 2, 1, 1, 0, 2, 0, 0},
                                 ParamValues{4, 64, 2, 2, 1, 0, 2, 0, 0}, ParamValues{8, 128, 2, 1, 1, 1, 1, 0, 0},
                                 ParamValues{8, 64, 2, 1, 1, 1, 2, 0, 0}, ParamValues{8, 128, 2, 1, 1, 0, 2, 0, 0},
                                 ParamValues{4, 128, 2, 1, 1, 1, 2, 0, 0}})
        EXPECT_EQ(f.invalid_reason(v, Arch{80}), "") << f.describe(v);
}

TEST(Families, DecodeNarrowStripsNeedManyGroupsAlongK) {
    const Family& f = find_family("decode");
    EXPECT_NE(f.invalid_reason({8, 32, 8, 1, 1, 0, 1, 0, 0}, Arch{90}).find("KW >= 16"), std::string::npos);
    EXPECT_EQ(f.invalid_reason({8, 32, 16, 1, 1, 0, 1, 0, 0}, Arch{90}), "");
    EXPECT_EQ(f.invalid_reason({8, 32, 64, 1, 1, 0, 1, 0, 0}, Arch{90}), "");
    EXPECT_EQ(f.invalid_reason({8, 64, 8, 1, 1, 0, 1, 0, 0}, Arch{90}), "");  // wider strips keep their KW
}

TEST(Families, TransposesFollowTheTaAndTbParameters) {
    const Family& ladder = find_family("async");
    EXPECT_TRUE(ladder.reads_transposes(ladder.defaults, false, false));
    EXPECT_FALSE(ladder.reads_transposes(ladder.defaults, false, true));
    EXPECT_FALSE(ladder.reads_transposes(ladder.defaults, true, false));
    // Decode reads A as M x K always, and B as TB says: NN and NT.
    const Family& decode = find_family("decode");
    ParamValues nt = decode.defaults;
    nt[decode.param_index("TB")] = 1;
    EXPECT_TRUE(decode.reads_transposes(decode.defaults, false, false));
    EXPECT_FALSE(decode.reads_transposes(decode.defaults, false, true));
    EXPECT_TRUE(decode.reads_transposes(nt, false, true));
    EXPECT_FALSE(decode.reads_transposes(nt, false, false));
    EXPECT_FALSE(decode.reads_transposes(nt, true, true));
    EXPECT_FALSE(decode.reads_transposes(decode.defaults, true, false));
}

TEST(Families, DescribeAndNameExpression) {
    const Family& f = find_family("vec4");
    EXPECT_EQ(f.name_expression({128, 64, 8, 8, 4}), "sgemm_vec4<128, 64, 8, 8, 4>");
    EXPECT_EQ(f.describe({128, 64, 8, 8, 4}), "vec4 BM=128 BN=64 BK=8 TM=8 TN=4");
    EXPECT_EQ(f.value({128, 64, 8, 8, 4}, "BN"), 64);
    EXPECT_THROW(f.value({128, 64, 8, 8, 4}, "XX"), Error);
}

}  // namespace
