// What dispatch decides for a shape key, on hand-built databases with real cubins and no
// GPU: exact, nearest and fallback (each policy), rows of other devices and toolchains never
// used, winners this build cannot run skipped, and the per-stream workspace respected.
#include <gtest/gtest.h>

#include <algorithm>

#include "src/dispatch/catalog.h"
#include "src/families/registry.h"
#include "src/records/kernel_records.h"
#include "templates/sgemm_common.cuh"
#include "templates/sgemm_warptile.cuh"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

namespace {

// The decode family at MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=4 RING=0: split-K, so it needs a workspace.
Binary decode_binary() {
    static const Binary binary = [] {
        const Family& f = find_family("decode");
        const ParamValues v = {8, 128, 8, 4, 1, 0, 4, 0, 0};
        return to_binary(compile_kernel(f, v, Arch{90}), kernel_ref(f, v));
    }();
    return binary;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Winners of h200(): the naive kernel at M = 1, 8, 32 (N = K = 4096), cuBLAS at 4096^3, and
// the split-K decode kernel at 8 x 1024 x 4096.
class Catalog_ : public ::testing::Test {
protected:
    void SetUp() override {
        store_ = std::make_unique<TuningStore>(dir_.file("t.db"));
        const Binary naive = naive_binary(), decode = decode_binary();
        store_->put_binary(naive);
        store_->put_binary(decode);
        id_ = store_->add_device(h200());
        for (int M : {1, 8, 32}) store_->put_winner(winner(id_, shape(M, 4096, 4096), 0.01 * M, &naive));
        store_->put_winner(winner(id_, shape(4096, 4096, 4096), 1.0, nullptr));
        store_->put_winner(winner(id_, shape(8, 1024, 4096), 0.01, &decode));
    }
    Catalog catalog() { return load_catalog(*store_, h200(), GemmPrecision::fp32); }
    // A decision points into its catalog: this one is kept in catalog_.
    Decision decide_for(const ShapeKey& key, sgemm_dispatch_fallback_t fallback = SGEMM_DISPATCH_FALLBACK_CUBLAS) {
        catalog_ = catalog();
        return decide(catalog_, key, fallback, Arch{90}, workspace_bytes_needed(catalog_));
    }

    TempDir dir_;
    Catalog catalog_;
    std::unique_ptr<TuningStore> store_;
    std::string id_;
};

}  // namespace

TEST_F(Catalog_, LoadsTheDevicesWinnersWithTheirBinaries) {
    const Catalog c = catalog();
    EXPECT_EQ(c.device.id(), id_);
    EXPECT_EQ(c.winners.size(), 5u);
    EXPECT_TRUE(c.skipped.empty());
    EXPECT_EQ(c.binaries.size(), 2u);
    EXPECT_TRUE(c.binaries.count(naive_binary().cache_key));
    EXPECT_TRUE(c.unusable_binaries.empty());
}

// A handle serves one precision: the other's winners are not read, so they neither size its
// workspaces nor count among its winners.
TEST_F(Catalog_, ReadsOnlyTheWinnersOfItsPrecision) {
    ShapeKey tf32 = shape(8, 1024, 4096);
    tf32.precision = GemmPrecision::tf32;
    store_->put_winner(winner(id_, tf32, 0.005, nullptr));
    EXPECT_EQ(load_catalog(*store_, h200(), GemmPrecision::fp32).winners.size(), 5u);
    const Catalog c = load_catalog(*store_, h200(), GemmPrecision::tf32);
    ASSERT_EQ(c.winners.size(), 1u);
    EXPECT_EQ(c.winners[0].shape, tf32);
    EXPECT_TRUE(c.winners[0].kernel.is_cublas());
    EXPECT_EQ(workspace_bytes_needed(c), 0u);  // fp32's split-K decode winner is not its concern
}

TEST_F(Catalog_, AnExactWinnerRunsItsKernel) {
    const Decision d = decide_for(shape(8, 4096, 4096));
    EXPECT_EQ(d.selection.kind, SelectionKind::Exact);
    EXPECT_EQ(d.route, Route::Kernel);
    EXPECT_EQ(d.kernel, naive_binary().kernel);
}

TEST_F(Catalog_, ACublasWinnerCallsCublas) {
    const Decision d = decide_for(shape(4096, 4096, 4096), SGEMM_DISPATCH_FALLBACK_ERROR);
    EXPECT_EQ(d.selection.kind, SelectionKind::Exact);
    EXPECT_EQ(d.route, Route::Cublas);
    EXPECT_TRUE(d.kernel.is_cublas());
}

TEST_F(Catalog_, AShapeWithoutWinnerTakesTheNearest) {
    const Decision d = decide_for(shape(4, 4096, 4000));
    EXPECT_EQ(d.selection.kind, SelectionKind::Nearest);
    EXPECT_EQ(d.route, Route::Kernel);
    EXPECT_EQ(d.selection.winner->shape, shape(8, 4096, 4096));
}

// The nearest winner's kernel may not run the call's shape: the naive kernel of M = 450000
// launches M / 8 blocks in y, so at M = 600000 it would pass the grid's limit of 65535. It is
// passed over, with the reason, for the next nearest within reach (cuBLAS at 300000).
TEST_F(Catalog_, ANearestWinnerWhoseKernelCannotRunTheShapeIsPassedOver) {
    const Binary naive = naive_binary();
    store_->put_winner(winner(id_, shape(450000, 4096, 4096), 10.0, &naive));
    store_->put_winner(winner(id_, shape(300000, 4096, 4096), 10.0, nullptr));
    const Decision d = decide_for(shape(600000, 4096, 4096));
    EXPECT_EQ(d.selection.kind, SelectionKind::Nearest);
    EXPECT_EQ(d.route, Route::Cublas);
    EXPECT_EQ(d.selection.winner->shape, shape(300000, 4096, 4096));
    EXPECT_TRUE(contains(d.reason, "passed over M=450000 N=4096 K=4096")) << d.reason;
    EXPECT_TRUE(contains(d.reason, "65535")) << d.reason;
    EXPECT_EQ(decide_for(shape(400000, 4096, 4096)).selection.winner->shape, shape(450000, 4096, 4096));
}

TEST_F(Catalog_, NothingNearFallsBackByPolicy) {
    ShapeKey tt = shape(8, 4096, 4096);
    tt.trans_a = tt.trans_b = true;  // no TT winner at all

    Decision d = decide_for(tt, SGEMM_DISPATCH_FALLBACK_CUBLAS);
    EXPECT_EQ(d.selection.kind, SelectionKind::Fallback);
    EXPECT_EQ(d.route, Route::Cublas);
    EXPECT_TRUE(contains(d.reason, "fallback policy: cuBLAS")) << d.reason;

    d = decide_for(tt, SGEMM_DISPATCH_FALLBACK_BUILTIN);
    EXPECT_EQ(d.route, Route::Builtin);
    EXPECT_EQ(d.kernel, builtin_kernel(true, true));
    EXPECT_TRUE(contains(d.kernel.description, "TA=1 TB=1")) << d.kernel.description;
    EXPECT_TRUE(contains(d.kernel.description, "SPLITS=1")) << d.kernel.description;

    d = decide_for(tt, SGEMM_DISPATCH_FALLBACK_ERROR);
    EXPECT_EQ(d.route, Route::Refuse);
    EXPECT_TRUE(contains(d.reason, "SGEMM_DISPATCH_NO_KERNEL")) << d.reason;
}

// The largest size is 2^31 - 4096, past which each of M, N and K is refused by name, for
// every kernel of this build (kernel_cannot_run), not cuBLAS.
TEST(KernelCannotRun, ASizePastTwoToThe31Minus4096) {
    EXPECT_EQ(kLargestKernelDimension, (1ll << 31) - 4096);
    EXPECT_EQ(size_past_kernels(kLargestKernelDimension, kLargestKernelDimension, kLargestKernelDimension), "");
    EXPECT_EQ(size_past_kernels(kLargestKernelDimension + 1, 1, 1),
              "M=2147479553 is past 2^31 - 4096, the largest size the kernels' 32-bit tile counts take");
    EXPECT_TRUE(contains(size_past_kernels(1, INT_MAX, 1), "N=2147483647 is past"));
    EXPECT_TRUE(contains(size_past_kernels(1, 1, INT_MAX - 14), "K=2147483633 is past"));
    for (const Family& f : all_families())
        EXPECT_TRUE(contains(kernel_cannot_run(kernel_ref(f, f.defaults), shape(1, 8, INT_MAX - 14), Arch{90}),
                             "is past 2^31 - 4096")) << f.name;
    EXPECT_EQ(kernel_cannot_run(KernelRef::cublas(), shape(1, 8, INT_MAX), Arch{90}), "");
}

// A size within 4096 of 2^31 wraps in the kernels' int tile counts (a K of 2^31 - 15 ran no
// k-tiles and returned beta x C): neither the built-in kernel nor a nearest winner's is
// launched for it, and the call says why; cuBLAS, by policy, still serves it.
TEST_F(Catalog_, TheBuiltInKernelIsNotLaunchedForASizeItsTileCountsWrap) {
    const auto tt = [](int M, int N, int K) {  // no TT winner at all: the fallback decides
        ShapeKey key = shape(M, N, K);
        key.trans_a = key.trans_b = true;
        return key;
    };
    const ShapeKey huge = tt(1, 64, INT_MAX - 14);
    Decision d = decide_for(huge, SGEMM_DISPATCH_FALLBACK_BUILTIN);
    EXPECT_EQ(d.route, Route::Refuse);
    EXPECT_TRUE(contains(d.reason, "fallback policy: the built-in kernel")) << d.reason;
    EXPECT_TRUE(contains(d.reason, "which cannot run it (K=2147483633 is past 2^31 - 4096")) << d.reason;
    EXPECT_TRUE(contains(d.reason, "SGEMM_DISPATCH_NO_KERNEL")) << d.reason;
    EXPECT_EQ(decide_for(huge, SGEMM_DISPATCH_FALLBACK_CUBLAS).route, Route::Cublas);
    // A nearest winner's kernel is passed over for it the same way (N and K have no reach
    // limit, so the naive kernel of M=1 N=4096 K=4096 is the nearest).
    d = decide_for(shape(1, 4096, INT_MAX - 14));
    EXPECT_NE(d.route, Route::Kernel);
    EXPECT_TRUE(contains(d.reason, "passed over M=1 N=4096 K=4096")) << d.reason;
    EXPECT_TRUE(contains(d.reason, "is past 2^31 - 4096")) << d.reason;
    d = decide_for(tt(1, 64, kLargestKernelDimension), SGEMM_DISPATCH_FALLBACK_BUILTIN);
    EXPECT_EQ(d.route, Route::Builtin) << d.reason;
}

TEST_F(Catalog_, AnotherAlignmentClassFallsBack) {
    ShapeKey a4 = shape(8, 4096, 4096);
    a4.alignment = 4;
    EXPECT_EQ(decide_for(a4).selection.kind, SelectionKind::Fallback);
}

TEST_F(Catalog_, RowsOfAnotherDeviceOrToolchainAreNeverUsed) {
    // The same GPU with another driver, and with another NVRTC: other devices.
    DeviceFingerprint other_driver = h200(1), other_nvrtc = h200();
    other_nvrtc.nvrtc_version = "12.4";
    for (const DeviceFingerprint& other : {other_driver, other_nvrtc}) {
        const std::string other_id = store_->add_device(other);
        store_->put_winner(winner(other_id, shape(2, 4096, 4096), 1e-6, nullptr));  // faster, and exact
    }
    const Catalog mine = catalog();
    EXPECT_EQ(mine.winners.size(), 5u);
    const Decision d = decide(mine, shape(2, 4096, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0);
    EXPECT_EQ(d.selection.kind, SelectionKind::Nearest) << "the other devices' exact winners are not seen";
    EXPECT_FALSE(d.kernel.is_cublas());

    // A device with no rows at all: everything falls back.
    const Catalog none = load_catalog(*store_, h200(2), GemmPrecision::fp32);
    EXPECT_TRUE(none.winners.empty());
    EXPECT_EQ(decide(none, shape(8, 4096, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0).selection.kind,
              SelectionKind::Fallback);
}

TEST_F(Catalog_, WinnersThisBuildCannotRunAreSkippedWithTheReason) {
    Binary stale = naive_binary();
    stale.cache_key = "stale";
    stale.kernel.template_hash = "an older template";
    store_->put_binary(stale);
    store_->put_winner(winner(id_, shape(2, 2048, 2048), 0.01, &stale));
    Binary unknown = naive_binary();
    unknown.cache_key = "unknown";
    unknown.kernel.family = "retired";
    store_->put_binary(unknown);
    store_->put_winner(winner(id_, shape(3, 2048, 2048), 0.01, &unknown));
    // An edited row: 9 is not in naive's list for BLOCK_Y, and the binary it names is 32x8's.
    // Its own binary is not in the cache and cannot be compiled, so create would fail on it.
    Binary edited = naive_binary();
    edited.cache_key = "edited";
    edited.kernel.params = {32, 9};
    store_->put_binary(edited);
    store_->put_winner(winner(id_, shape(5, 2048, 2048), 0.01, &edited));
    // A warptile row edited to BM = 0: judging it must not divide by its tile (it did: SIGFPE).
    Binary zero_tile = naive_binary();
    zero_tile.cache_key = "zero tile";
    zero_tile.kernel = kernel_ref(find_family("warptile"), {0, 128, 16, 64, 64, 16, 8, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0});
    store_->put_binary(zero_tile);
    store_->put_winner(winner(id_, shape(6, 2048, 2048), 0.01, &zero_tile));
    // The sources hash is per family: naive's kernel under warptile's sources' hash (this
    // build's, but not naive's) was tuned with other naive sources than this build's.
    Binary other_family = naive_binary();
    other_family.cache_key = "other family";
    other_family.kernel.template_hash = family_sources_hash(find_family("warptile"));
    ASSERT_NE(other_family.kernel.template_hash, naive_binary().kernel.template_hash);
    store_->put_binary(other_family);
    store_->put_winner(winner(id_, shape(7, 2048, 2048), 0.01, &other_family));

    const Catalog c = catalog();
    EXPECT_EQ(c.winners.size(), 5u);
    ASSERT_EQ(c.skipped.size(), 5u);
    std::string all;
    for (const auto& skipped : c.skipped) all += skipped.describe() + "\n";
    EXPECT_TRUE(contains(all, "BM=0 is no size or count a kernel of family warptile can have")) << all;
    for (const int m : {2, 7}) {
        const auto it = std::find_if(c.skipped.begin(), c.skipped.end(),
                                     [&](const SkippedWinner& skipped) { return skipped.winner.shape.M == m; });
        ASSERT_NE(it, c.skipped.end()) << "M=" << m << " " << all;
        EXPECT_TRUE(contains(it->why, "other kernel sources")) << it->describe();
    }
    EXPECT_TRUE(contains(all, "no kernel family 'retired'")) << all;
    EXPECT_TRUE(contains(all, "and this build cannot compile it: BLOCK_Y=9 is not one of")) << all;
    EXPECT_EQ(decide(c, shape(2, 2048, 2048), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0).selection.winner->shape,
              shape(1, 4096, 4096))
        << "the stale exact winner is not taken";
}

// A kernel built for 16-byte aligned operands only (warptile's ALIGNED = 1) is usable for a
// key of that alignment class alone: a row that gives it another is skipped, with the reason.
TEST_F(Catalog_, AKernelForAlignedOperandsOnlyServesAlignmentClass16) {
    const Family& warptile = find_family("warptile");
    ParamValues values = warptile.defaults;
    values[warptile.param_index("ALIGNED")] = 1;
    Binary aligned_only = naive_binary();  // the cubin is not loaded here
    aligned_only.kernel = kernel_ref(warptile, values);
    aligned_only.cache_key = kernel_cache_key(warptile, values, Arch{90});
    store_->put_binary(aligned_only);
    ShapeKey a16 = shape(6, 2048, 2048), a4 = shape(7, 2048, 2048);
    a4.alignment = 4;
    store_->put_winner(winner(id_, a16, 0.01, &aligned_only));
    store_->put_winner(winner(id_, a4, 0.01, &aligned_only));

    const Catalog c = catalog();
    EXPECT_EQ(c.winners.size(), 6u);
    ASSERT_EQ(c.skipped.size(), 1u);
    EXPECT_EQ(c.skipped[0].winner.shape, a4);
    EXPECT_TRUE(contains(c.skipped[0].describe(), "it needs 16-byte alignment")) << c.skipped[0].describe();
    EXPECT_EQ(decide(c, a16, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0).kernel, aligned_only.kernel);
    // A call of the same shape whose operands are less aligned never gets it, exact row or not.
    for (int alignment : {8, 4}) {
        ShapeKey call = a16;
        call.alignment = alignment;
        EXPECT_FALSE(decide(c, call, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0).kernel == aligned_only.kernel) << alignment;
    }
    EXPECT_FALSE(decide(c, a4, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0).kernel == aligned_only.kernel);
}

// The families' lists and rules say what the tuner searches. A winner outside them (an edited
// row, as here) whose own binary is cached stays usable all the same.
TEST_F(Catalog_, AWinnerOutsideTheSearchSpaceRunsFromItsCachedBinary) {
    const Family& naive = find_family("naive");
    ASSERT_NE(naive.invalid_reason({32, 9}, Arch{90}), "");
    Binary own = naive_binary();
    own.kernel = kernel_ref(naive, {32, 9});
    own.cache_key = kernel_cache_key(naive, {32, 9}, Arch{90});
    store_->put_binary(own);
    store_->put_winner(winner(id_, shape(5, 2048, 2048), 0.01, &own));

    const Catalog c = catalog();
    EXPECT_TRUE(c.skipped.empty());
    EXPECT_EQ(c.winners.size(), 6u);
    EXPECT_TRUE(c.binaries.count(own.cache_key));
}

TEST_F(Catalog_, AMissingBinaryIsMarkedForCompiling) {
    store_->connection().exec("PRAGMA foreign_keys = OFF");
    store_->connection().exec("DELETE FROM binaries WHERE cache_key = '" + decode_binary().cache_key + "'");
    const Catalog c = catalog();
    EXPECT_EQ(c.winners.size(), 5u) << "the winner stays; its kernel is compiled at create";
    ASSERT_TRUE(c.unusable_binaries.count(decode_binary().cache_key));
    EXPECT_EQ(c.unusable_binaries.at(decode_binary().cache_key), "missing from the binary cache");
}

// A row whose cubin is for sm_80, filed under the key of the sm_90 binary (a damaged
// cache): the cubin cannot run here, so the kernel is compiled again.
TEST_F(Catalog_, ACubinForAnotherArchIsMarkedForCompiling) {
    const Family& naive = find_family("naive");
    const ParamValues v = {16, 8};
    Binary wrong_arch = to_binary(compile_kernel(naive, v, Arch{80}), kernel_ref(naive, v));
    wrong_arch.cache_key = kernel_cache_key(naive, v, Arch{90});
    store_->put_binary(wrong_arch);
    store_->put_winner(winner(id_, shape(5, 64, 64), 0.01, &wrong_arch));
    const Catalog c = catalog();
    ASSERT_TRUE(c.unusable_binaries.count(wrong_arch.cache_key));
    const std::string why = c.unusable_binaries.at(wrong_arch.cache_key);
    EXPECT_TRUE(contains(why, "cannot run")) << why;
}

// A cubin damaged inside in the file, its ELF whole: the checksum stored with it tells, and
// dispatch compiles the kernel again rather than launch damaged code.
TEST_F(Catalog_, ACubinThatDoesNotMatchItsChecksumIsMarkedForCompiling) {
    const Family& naive = find_family("naive");
    const ParamValues v = {16, 8};
    const Binary binary = to_binary(compile_kernel(naive, v, Arch{90}), kernel_ref(naive, v));
    store_->put_binary(binary);
    store_->put_winner(winner(id_, shape(5, 64, 64), 0.01, &binary));
    std::vector<char> damaged = binary.cubin;
    damaged[damaged.size() / 2] ^= 0x5a;
    store_->connection()
        .query("UPDATE binaries SET cubin = ?1 WHERE cache_key = ?2")
        .bind(1, damaged)
        .bind(2, binary.cache_key)
        .run();
    const Catalog c = catalog();
    ASSERT_TRUE(c.unusable_binaries.count(binary.cache_key));
    const std::string why = c.unusable_binaries.at(binary.cache_key);
    EXPECT_TRUE(contains(why, "does not match the checksum stored with it")) << why;
}

// The split-K decode binary (SPLITS=4) serves a winner with 2 slices as it is; paired with a
// winner that does not split (an edited database), it would run wrongly, so that winner gets
// its own binary's key: marked for compiling, or taken from the cache once it is there.
TEST_F(Catalog_, ABinaryOfAnotherInstantiationIsNotLaunchedForAWinner) {
    const Family& decode = find_family("decode");
    Winner two_slices = winner(id_, shape(8, 2048, 4096), 0.01, nullptr);
    two_slices.kernel = kernel_ref(decode, {8, 128, 8, 4, 1, 0, 2, 0, 0});
    two_slices.binary_key = decode_binary().cache_key;
    Winner whole = two_slices;
    whole.shape = shape(8, 512, 4096);
    whole.kernel = kernel_ref(decode, {8, 128, 8, 4, 1, 0, 1, 0, 0});
    store_->put_winner(two_slices);
    store_->put_winner(whole);
    const Catalog c = catalog();
    const std::string own_key = kernel_cache_key(decode, {8, 128, 8, 4, 1, 0, 1, 0, 0}, Arch{90});
    ASSERT_NE(own_key, decode_binary().cache_key);
    const auto key_of = [&](const ShapeKey& s) {
        for (const Winner& w : c.winners)
            if (w.shape == s) return w.binary_key;
        return std::string("no winner");
    };
    EXPECT_EQ(key_of(shape(8, 2048, 4096)), decode_binary().cache_key);
    EXPECT_EQ(key_of(shape(8, 512, 4096)), own_key);
    EXPECT_TRUE(c.binaries.count(decode_binary().cache_key));
    ASSERT_TRUE(c.unusable_binaries.count(own_key));
    EXPECT_TRUE(contains(c.unusable_binaries.at(own_key), "is not sgemm_decode<8, 128, 8, 4, 1, 0, false, 0, 0> for sm_90"))
        << c.unusable_binaries.at(own_key);

    const Family& decode_family = find_family("decode");
    store_->put_binary(to_binary(compile_kernel(decode_family, {8, 128, 8, 4, 1, 0, 1, 0, 0}, Arch{90}),
                                 kernel_ref(decode_family, {8, 128, 8, 4, 1, 0, 1, 0, 0})));
    const Catalog cached = catalog();
    EXPECT_TRUE(cached.binaries.count(own_key));
    EXPECT_FALSE(cached.unusable_binaries.count(own_key));
}

// A winner tuned on a machine of another CUDA release holds the binary key of that release's
// NVRTC, which its device row names: judged by that, the binary is its own. sgemm-db's verify,
// export, import and merge judged it by this process's NVRTC, and called every such winner
// another instantiation's binary (a central database gathering several machines' rows).
TEST(BinaryMismatch, IsJudgedByTheNvrtcOfTheWinnersDevice) {
    const Family& decode = find_family("decode");
    const ParamValues params = {8, 128, 8, 4, 1, 0, 1, 0, 0};
    DeviceFingerprint other_release = h200();
    other_release.nvrtc_version = nvrtc_version() == "12.8" ? "12.9" : "12.8";
    Winner w = winner(other_release.id(), shape(8, 512, 4096), 0.01, nullptr);
    w.kernel = kernel_ref(decode, params);
    w.binary_key = kernel_cache_key(decode, params, Arch{90}, KernelBuild::product, other_release.nvrtc_version);
    ASSERT_NE(w.binary_key, kernel_cache_key(decode, params, Arch{90})) << "the NVRTC version is not in the key";
    EXPECT_EQ(own_binary_key(w, other_release), w.binary_key);
    EXPECT_EQ(binary_mismatch(w, other_release), "");
    const std::string here = binary_mismatch(w, h200());
    EXPECT_TRUE(contains(here, "for sm_90 with NVRTC " + nvrtc_version() + " (that is ")) << here;
}

// Warptile at its defaults with `splits` slices summed `how` (SGEMM_SUM_BY_*).
ParamValues warptile_split(int splits, int how) {
    const Family& f = find_family("warptile");
    ParamValues v = f.defaults;
    v[f.param_index("SPLITS")] = splits;
    v[f.param_index("SUM_PASS")] = how;
    return v;
}

// The binary of warptile_split(4, SGEMM_SUM_BY_ATOMICS), which serves every split count above 1.
const Binary& atomic_binary() {
    static const Binary binary = [] {
        const Family& f = find_family("warptile");
        const ParamValues v = warptile_split(4, SGEMM_SUM_BY_ATOMICS);
        return to_binary(compile_kernel(f, v, Arch{90}), kernel_ref(f, v));
    }();
    return binary;
}

const Winner* winner_for(const Catalog& c, const ShapeKey& key) {
    for (const Winner& w : c.winners)
        if (w.shape == key) return &w;
    return nullptr;
}

// A winner whose slices take turns on C repeats bit for bit: a deterministic catalog keeps it
// as it is, with no stand-in, and decide says how its slices finish.
TEST_F(Catalog_, ADeterministicCatalogKeepsAWinnerWhoseSlicesTakeTurnsOnC) {
    const Family& warptile = find_family("warptile");
    const ParamValues v = warptile_split(4, SGEMM_SUM_IN_ORDER);
    const KernelRef turns = kernel_ref(warptile, v);
    const Binary binary = to_binary(compile_kernel(warptile, v, Arch{90}), turns);
    store_->put_binary(binary);
    const ShapeKey key = shape(32, 4096, 4096);
    store_->put_winner(winner(id_, key, 0.01, &binary));
    const Catalog deterministic = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    ASSERT_TRUE(winner_for(deterministic, key));
    EXPECT_EQ(winner_for(deterministic, key)->kernel, turns);
    EXPECT_TRUE(deterministic.stand_ins.empty());
    EXPECT_TRUE(deterministic.skipped.empty());
    const Decision d =
        decide(deterministic, key, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, workspace_bytes_needed(deterministic));
    EXPECT_EQ(d.kernel, turns);
    EXPECT_TRUE(contains(d.reason, "its 4 slices take turns adding into C, in slice order, so C repeats bit for bit"))
        << d.reason;
    EXPECT_FALSE(contains(d.reason, "atomics")) << d.reason;
}

// A winner whose slices add into C with atomics runs as it is by default. With
// `deterministic` and no measurement of its shape stored (an imported database), it runs as
// its twin: the same tiles and split, summed by the second kernel, whose binary is compiled at
// create until the cache holds it, with room for its partials.
TEST_F(Catalog_, ADeterministicCatalogRunsAnUnmeasuredAtomicWinnerAsItsTwin) {
    const Family& warptile = find_family("warptile");
    const KernelRef atomic = kernel_ref(warptile, warptile_split(4, SGEMM_SUM_BY_ATOMICS));
    const KernelRef twin = kernel_ref(warptile, warptile_split(4, SGEMM_SUM_BY_PASS));
    store_->put_binary(atomic_binary());
    const ShapeKey key = shape(32, 4096, 4096);
    store_->put_winner(winner(id_, key, 0.01, &atomic_binary()));

    const Catalog as_tuned = catalog();
    ASSERT_TRUE(winner_for(as_tuned, key));
    EXPECT_EQ(winner_for(as_tuned, key)->kernel, atomic);
    EXPECT_TRUE(as_tuned.stand_ins.empty());

    const Catalog deterministic = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    ASSERT_TRUE(winner_for(deterministic, key));
    const Winner& w = *winner_for(deterministic, key);
    EXPECT_EQ(w.kernel, twin);
    EXPECT_FALSE(kernel_sums_with_atomics(w.kernel));
    ASSERT_EQ(deterministic.stand_ins.size(), 1u);
    EXPECT_EQ(deterministic.stand_ins[0].atomic.kernel, atomic);
    EXPECT_FALSE(deterministic.stand_ins[0].ms) << "the twin was not timed";
    EXPECT_TRUE(contains(deterministic.stand_ins[0].describe(), "runs " + twin.description + " instead"))
        << deterministic.stand_ins[0].describe();
    const std::string twin_key = kernel_cache_key(warptile, twin.params, Arch{90});
    EXPECT_EQ(w.binary_key, twin_key);
    ASSERT_TRUE(deterministic.unusable_binaries.count(twin_key));
    EXPECT_TRUE(contains(deterministic.unusable_binaries.at(twin_key), "deterministic stand-in"));
    EXPECT_GE(workspace_bytes_needed(deterministic), 4u * 32 * 4096 * sizeof(float)) << "the twin's partials";
    EXPECT_LT(workspace_bytes_needed(as_tuned), 4u * 32 * 4096 * sizeof(float));
    const Decision d =
        decide(deterministic, key, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, workspace_bytes_needed(deterministic));
    EXPECT_EQ(d.selection.kind, SelectionKind::Exact);
    EXPECT_EQ(d.kernel, twin);
    EXPECT_TRUE(contains(d.reason, "deterministic: " + twin.description + " stands in for the tuned kernel, " + atomic.description)) << d.reason;
    EXPECT_TRUE(contains(d.reason, "the time quoted is the tuned kernel's")) << d.reason;
    // The winner named with that time is the tuned kernel, not the stand-in (never timed).
    EXPECT_TRUE(contains(d.reason, "exact winner, tuned for this shape at " + w.tuned_at + ": " + atomic.description + " ("))
        << d.reason;
    EXPECT_FALSE(contains(d.reason, twin.description + " (")) << d.reason;
    EXPECT_FALSE(contains(d.reason, "C varies in the last bits")) << d.reason;
    const Decision tuned = decide(as_tuned, key, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, workspace_bytes_needed(as_tuned));
    EXPECT_TRUE(contains(tuned.reason, "its 4 slices add into C with float atomics, so C varies in the last bits"))
        << tuned.reason;
    // A nearest call whose partials fit the workspace takes the stand-in too, and says so.
    const Decision nearest = decide(deterministic, shape(48, 2048, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
                                    workspace_bytes_needed(deterministic));
    EXPECT_EQ(nearest.selection.kind, SelectionKind::Nearest);
    EXPECT_FALSE(kernel_sums_with_atomics(nearest.kernel)) << nearest.kernel.description;
    EXPECT_TRUE(contains(nearest.reason, " stands in for the tuned kernel, " + atomic.description)) << nearest.reason;
    EXPECT_TRUE(contains(nearest.reason, "whose winner is " + atomic.description + " (")) << nearest.reason;

    store_->put_binary(to_binary(compile_kernel(warptile, twin.params, Arch{90}), twin));
    const Catalog cached = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    EXPECT_TRUE(cached.binaries.count(twin_key));
    EXPECT_FALSE(cached.unusable_binaries.count(twin_key));
}

// With the tune's measurements stored, the stand-in is the fastest valid one without atomics
// that this build can launch: not an atomic kernel however fast, nor one of other sources,
// nor an invalid one, nor one timed and then faulting the GPU in a later run. Its time is the
// one quoted. Where cuBLAS was faster than it, cuBLAS;
// with no valid one, the twin.
TEST_F(Catalog_, ADeterministicCatalogRunsTheFastestMeasuredKernelWithoutAtomics) {
    const Family& warptile = find_family("warptile");
    const KernelRef in_kernel = kernel_ref(warptile, warptile_split(2, SGEMM_SUM_BY_LAST_BLOCK));
    store_->put_binary(atomic_binary());
    const ShapeKey key = shape(32, 4096, 4096);
    store_->put_winner(winner(id_, key, 0.01, &atomic_binary()));  // cuBLAS took 1 ms
    const auto measure = [&](const KernelRef& kernel, double ms, bool valid = true, const std::string& why = "wrong") {
        Measurement m = measurement(id_, key, ms);
        m.kernel = kernel;
        m.valid = valid;
        if (!valid) m.invalid_reason = why;
        store_->record_measurement(m);
    };
    measure(kernel_ref(warptile, warptile_split(8, SGEMM_SUM_BY_ATOMICS)), 0.009);
    KernelRef stale = in_kernel;
    stale.template_hash = "0123456789abcdef";
    measure(stale, 0.012);
    const KernelRef wrong = kernel_ref(warptile, warptile_split(3, SGEMM_SUM_BY_LAST_BLOCK));
    measure(wrong, 0.001, /*valid=*/false);
    const KernelRef faulted = kernel_ref(warptile, warptile_split(4, SGEMM_SUM_BY_PASS));
    measure(faulted, 0.015);
    measure(faulted, 0.015, /*valid=*/false, kFaultedReason + std::string("CUDA error: cudaErrorIllegalAddress"));
    measure(in_kernel, 0.02);
    measure(naive_binary().kernel, 0.05);

    Catalog deterministic = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    ASSERT_TRUE(winner_for(deterministic, key));
    EXPECT_EQ(winner_for(deterministic, key)->kernel, in_kernel);
    EXPECT_DOUBLE_EQ(winner_for(deterministic, key)->ms, 0.02);
    EXPECT_DOUBLE_EQ(winner_for(deterministic, key)->speedup, 1.0 / 0.02) << "cuBLAS's 1 ms over the stand-in's time";
    EXPECT_EQ(winner_for(deterministic, key)->binary_key, kernel_cache_key(warptile, in_kernel.params, Arch{90}));
    Decision d = decide(deterministic, key, SGEMM_DISPATCH_FALLBACK_ERROR, Arch{90}, workspace_bytes_needed(deterministic));
    EXPECT_EQ(d.route, Route::Kernel);
    EXPECT_EQ(d.kernel, in_kernel);
    EXPECT_TRUE(contains(d.reason, "the fastest kernel without atomics measured for this shape (0.0200 ms")) << d.reason;

    // Every kernel without atomics slower than cuBLAS: cuBLAS stands in.
    store_->connection().exec("DELETE FROM measurements");
    measure(in_kernel, 1.5);
    deterministic = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    ASSERT_TRUE(winner_for(deterministic, key));
    EXPECT_TRUE(winner_for(deterministic, key)->kernel.is_cublas());
    EXPECT_DOUBLE_EQ(winner_for(deterministic, key)->ms, 1.0);
    d = decide(deterministic, key, SGEMM_DISPATCH_FALLBACK_ERROR, Arch{90}, workspace_bytes_needed(deterministic));
    EXPECT_EQ(d.route, Route::Cublas);
    EXPECT_TRUE(contains(d.reason, "cuBLAS took 1.0000 ms, the fastest kernel without atomics measured for this shape "
                                   "1.5000 ms"))
        << d.reason;

    // Only an invalid measurement without atomics: the twin, never the kernel that computed wrongly.
    store_->connection().exec("DELETE FROM measurements");
    measure(wrong, 0.001, /*valid=*/false);
    deterministic = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    ASSERT_TRUE(winner_for(deterministic, key));
    EXPECT_EQ(winner_for(deterministic, key)->kernel, kernel_ref(warptile, warptile_split(4, SGEMM_SUM_BY_PASS)));
}

// 32 slices (an edited row: the space stops at 16) have no sum in a fixed order: with
// `deterministic` and nothing measured the winner is left out, and says why.
TEST_F(Catalog_, ADeterministicCatalogSkipsAnAtomicWinnerWithoutAStandIn) {
    store_->put_binary(atomic_binary());
    const ShapeKey key = shape(32, 4096, 4096);
    Winner w = winner(id_, key, 0.01, &atomic_binary());
    w.kernel = kernel_ref(find_family("warptile"), warptile_split(32, SGEMM_SUM_BY_ATOMICS));
    store_->put_winner(w);
    EXPECT_TRUE(winner_for(catalog(), key)) << "launchable as it is";
    const Catalog deterministic = load_catalog(*store_, h200(), GemmPrecision::fp32, true);
    EXPECT_FALSE(winner_for(deterministic, key));
    ASSERT_EQ(deterministic.skipped.size(), 1u);
    EXPECT_TRUE(contains(deterministic.skipped[0].why, "options.deterministic")) << deterministic.skipped[0].why;
    EXPECT_TRUE(deterministic.stand_ins.empty());
}

TEST_F(Catalog_, EachStreamsWorkspaceFitsEveryWinnerAndBoundsNearestOnes) {
    const Catalog c = catalog();
    const std::size_t needed = workspace_bytes_needed(c);
    // The decode winner at M=8 serves its own N and K up to M=16, where the naive winner at
    // M=32 comes as near: room for its 4 slices of 16 x 1024.
    EXPECT_EQ(needed, sgemm_splitk_workspace_bytes(4, 16, 1024));  // already a multiple of 256

    const Family& decode = find_family("decode");
    const std::size_t splits = decode.param_index("SPLITS");
    auto with_slices = [&](int count) {
        ParamValues v = decode_binary().kernel.params;
        v[splits] = count;
        return kernel_ref(decode, v);
    };
    // A batch between the tuned ones, on the same weights: the winner as it is.
    Decision d = decide(c, shape(16, 1024, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, needed);
    EXPECT_EQ(d.selection.kind, SelectionKind::Nearest);
    EXPECT_EQ(d.kernel, decode_binary().kernel);
    EXPECT_FALSE(contains(d.reason, "re-split")) << d.reason;
    // M=16 at N=2048: 4 slices of 16 x 2048 partials would overflow. 2 slices fit in as many
    // blocks (2 of 8 rows x 2 slices x 16 of 128 columns against 1 x 4 x 8): the winner is
    // re-split, and the reason says so.
    d = decide(c, shape(16, 2048, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, needed);
    EXPECT_EQ(d.selection.kind, SelectionKind::Nearest);
    EXPECT_EQ(d.route, Route::Kernel);
    EXPECT_EQ(d.kernel, with_slices(2));
    EXPECT_TRUE(contains(d.reason, "re-split as " + with_slices(2).description)) << d.reason;
    // The most slices that fit: 3 of 10 x 2048 (the family's list has no count between 3 and 4).
    d = decide(c, shape(10, 2048, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, needed);
    EXPECT_EQ(d.kernel, with_slices(3));
    // Where not even 2 slices fit, the winner is passed over.
    d = decide(c, shape(16, 2048, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
               sgemm_splitk_workspace_bytes(2, 16, 2048) - 4);
    EXPECT_EQ(d.kernel.family, "naive");
    EXPECT_TRUE(contains(d.reason, "no fewer slices fit with as many blocks as its tuned launch")) << d.reason;
    // In a workspace sized for the winner's own shape alone, 8 x 1100 overflows with 4 slices,
    // and 3 would fit, but in 27 blocks where the winner's own launch has 32: passed over.
    d = decide(c, shape(8, 1100, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
               sgemm_splitk_workspace_bytes(4, 8, 1024));
    EXPECT_EQ(d.kernel.family, "naive");
    EXPECT_TRUE(contains(d.reason, "as many blocks as its tuned launch")) << d.reason;
    // With room for it, it is taken as it is.
    d = decide(c, shape(16, 2048, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
               sgemm_splitk_workspace_bytes(4, 16, 2048));
    EXPECT_EQ(d.selection.kind, SelectionKind::Nearest);
    EXPECT_EQ(d.kernel, decode_binary().kernel);
    EXPECT_FALSE(contains(d.reason, "re-split")) << d.reason;
    // Smaller than a winner's own shape: still served.
    d = decide(c, shape(4, 1024, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, needed);
    EXPECT_EQ(d.kernel, decode_binary().kernel);
    // An exact winner runs as it is, whatever workspace decide is asked with (dispatch's is
    // sized for it).
    d = decide(c, shape(8, 1024, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0);
    EXPECT_EQ(d.selection.kind, SelectionKind::Exact);
    EXPECT_EQ(d.kernel, decode_binary().kernel);
    // The workspace each stream gets is whole 256-byte units.
    EXPECT_EQ(needed % 256, 0u);
}

namespace {

// An H200 winner at `key`: the default warptile tiles in 4 slices summed by a second kernel,
// which needs partials in the workspace.
Winner summed_by_pass_at(const ShapeKey& key) {
    Winner w = winner(h200().id(), key, 1.0, nullptr);
    w.kernel = kernel_ref(find_family("warptile"), warptile_split(4, SGEMM_SUM_BY_PASS));
    return w;
}

}  // namespace

// A re-split must run the call's shape, not only fit the workspace: fewer slices give each
// decode block more of K, whose slice of A it holds in shared memory. The winner, 32 rows in
// 8 slices at K = 14336, holds 32 x 1792 floats of A (229,376 bytes of sm_90's 232,448); the
// 4 slices that fit the workspace at 4 times its N would need twice that, and the launch
// would fail. So the winner is passed over (found by tests/gpu/test_sampled_configs.cpp's
// review: the re-splits dispatch makes were checked for the workspace and the arch alone).
TEST(Catalog, AReSplitThatWouldPassTheSharedMemoryLimitIsNotMade) {
    Catalog c;
    c.device = h200();
    const Family& decode = find_family("decode");
    const ParamValues eight_slices = {32, 128, 1, 1, 1, 0, 8, 0, 0};  // MT BN KW UNROLL EF TB SPLITS RING SUM_PASS
    ASSERT_EQ(decode.invalid_reason(eight_slices, Arch{90}), "");
    Winner w = winner(c.device.id(), shape(32, 1024, 14336), 1.0, nullptr);
    w.kernel = kernel_ref(decode, eight_slices);
    c.winners.push_back(w);
    const ShapeKey wider = shape(32, 4096, 14336);
    ASSERT_EQ(decode.unsupported_shape_reason(eight_slices, 32, 4096, 14336, Arch{90}), "");
    ParamValues four_slices = eight_slices;
    four_slices[decode.param_index("SPLITS")] = 4;
    ASSERT_LE(decode.workspace_bytes(four_slices, 32, 4096, 14336, c.device.sm_count, 16), workspace_bytes_needed(c))
        << "4 slices fit the workspace";
    ASSERT_NE(decode.unsupported_shape_reason(four_slices, 32, 4096, 14336, Arch{90}), "")
        << "but not the shared memory";

    const Decision d = decide(c, wider, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, workspace_bytes_needed(c));
    EXPECT_EQ(d.selection.kind, SelectionKind::Fallback) << d.reason;
    EXPECT_EQ(d.route, Route::Cublas) << d.reason;
    EXPECT_TRUE(contains(d.reason, "no fewer slices fit with as many blocks as its tuned launch and within the GPU's "
                                   "limits"))
        << d.reason;
    // Where the workspace holds 8 slices at that N, the winner runs as it is.
    const Decision roomy = decide(c, wider, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
                                  decode.workspace_bytes(eight_slices, 32, 4096, 14336, c.device.sm_count, 16));
    EXPECT_EQ(roomy.route, Route::Kernel) << roomy.reason;
    EXPECT_EQ(roomy.kernel, w.kernel);
}

// A split-K winner whose tile is taller than twice its M has no fewer slices to re-split
// to with as many blocks (the twin of the default tile, 256 rows, at M=32): each stream's
// workspace holds its partials for every M up to 64, so a batch of 33 to 64 on the same
// weights runs it rather than the fallback. A staging winner's room stays at its own shape.
TEST(Catalog, ASplitKWinnerRunsEveryBatchTheNearestRuleGivesIt) {
    Catalog c;
    c.device = h200();
    const Family& warptile = find_family("warptile");
    const Winner w = summed_by_pass_at(shape(32, 4096, 4096));
    ASSERT_EQ(warptile.geometry(w.kernel.params, 64, 4096, 4096).blocks(),
              warptile.geometry(w.kernel.params, 32, 4096, 4096).blocks())
        << "one tile of rows up to M=64";
    c.winners.push_back(w);
    EXPECT_EQ(workspace_bytes_needed(c), sgemm_splitk_workspace_bytes(4, 64, 4096));
    for (int M : {33, 40, 63, 64}) {
        const Decision d = decide(c, shape(M, 4096, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
                                  workspace_bytes_needed(c));
        EXPECT_EQ(d.route, Route::Kernel) << "M=" << M << ": " << d.reason;
        EXPECT_EQ(d.kernel, w.kernel) << "M=" << M << ": " << d.reason;
    }
    // A tuned M=48 takes over from the geometric mean of 32 and 48 up: M=39 at most.
    Winner above = w;
    above.shape = shape(48, 4096, 4096);
    above.kernel = kernel_ref(warptile, warptile_split(2, SGEMM_SUM_BY_PASS));
    c.winners.push_back(above);
    EXPECT_EQ(workspace_bytes_needed(c), std::max(sgemm_splitk_workspace_bytes(4, 39, 4096),
                                                  sgemm_splitk_workspace_bytes(2, 96, 4096)));

    Catalog staged;
    staged.device = h200();
    ParamValues v = warptile.defaults;
    v[warptile.param_index("ALIGNED")] = 2;
    ShapeKey tight = shape(4095, 4097, 4093);
    tight.alignment = 4;
    Winner copies = winner(staged.device.id(), tight, 1.0, nullptr);
    copies.kernel = kernel_ref(warptile, v);
    staged.winners.push_back(copies);
    EXPECT_EQ(workspace_bytes_needed(staged),
              (warptile.workspace_bytes(v, 4095, 4097, 4093, staged.device.sm_count, 4) + 255) / 256 * 256);
}

// A larger tuned M whose kernel cannot run the split-K winner's N and K (a decode tile that
// holds a K of 4096 in shared memory, against down's 14336) is passed over there, so it
// does not bound the split-K winner's room: batches up to twice its M run it as tuned.
TEST(Catalog, ALargerWinnerThatCannotRunTheShapeLeavesTheSplitKWinnerItsReach) {
    Catalog c;
    c.device = h200();
    const Winner down = summed_by_pass_at(shape(32, 4096, 14336));
    c.winners.push_back(down);
    const Family& decode = find_family("decode");
    ParamValues whole_k = decode_binary().kernel.params;
    whole_k[decode.param_index("SPLITS")] = 1;
    Winner o = winner(c.device.id(), shape(48, 4096, 4096), 1.0, nullptr);
    o.kernel = kernel_ref(decode, whole_k);
    ASSERT_FALSE(kernel_cannot_run(o.kernel, shape(40, 4096, 14336), Arch{90}).empty());
    c.winners.push_back(o);
    EXPECT_EQ(workspace_bytes_needed(c), sgemm_splitk_workspace_bytes(4, 64, 4096));
    for (int M : {40, 64}) {
        const Decision d = decide(c, shape(M, 4096, 14336), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
                                  workspace_bytes_needed(c));
        EXPECT_EQ(d.kernel, down.kernel) << "M=" << M << ": " << d.reason;
    }
}

// A winner with a stream-K tail has no split count to lower: where its tail's workspace would
// overflow (its own shape fills whole waves and needed none), it is passed over, and the
// reason names the stream-K workspace.
TEST(Catalog, AStreamKWinnerWhoseTailOverflowsIsPassedOverAndSaysWhy) {
    Catalog c;
    c.device = h200();
    const Family& warptile = find_family("warptile");
    ParamValues tail = warptile.defaults;
    tail[warptile.param_index("SK")] = 1;
    Winner w = winner(c.device.id(), shape(3072, 1408, 4096), 1.0, nullptr);  // 12 x 11 = 132 tiles of 256x128
    w.kernel = kernel_ref(warptile, tail);
    c.winners.push_back(w);
    ASSERT_EQ(workspace_bytes_needed(c), 0u);
    // 11 x 11 = 121 tiles: all of them in the tail, which needs its workspace.
    const Decision d = decide(c, shape(2800, 1408, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0);
    EXPECT_EQ(d.route, Route::Cublas);
    EXPECT_TRUE(contains(d.reason, "bytes of stream-K workspace (each stream holds 0)")) << d.reason;
    EXPECT_FALSE(contains(d.reason, "fewer slices")) << d.reason;
    // With room for the tail it is taken as it is.
    const Decision roomy = decide(c, shape(2800, 1408, 4096), SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90},
                                  sgemm_stream_k_workspace_bytes(256, 128, c.device.sm_count));
    EXPECT_EQ(roomy.kernel, w.kernel);
}

// A staging winner copies operands only for calls below alignment class 16, so one tuned at
// class 16 (4097 columns in padded rows: only C's last column to compute) asks no workspace
// of the streams; one tuned at class 4 asks room for its copy of B. A call of class 4 that
// takes the class-16-sized workspace passes such a winner over, saying why.
TEST(Catalog, AStagingWinnerAsksWorkspaceOnlyBelowClass16) {
    Catalog c;
    c.device = h200();
    const Family& warptile = find_family("warptile");
    ParamValues staged = warptile.defaults;  // NN: B is copied as rows of k, A read where it is
    staged[warptile.param_index("ALIGNED")] = 2;
    Winner padded = winner(c.device.id(), shape(4095, 4097, 4093), 1.0, nullptr);
    padded.kernel = kernel_ref(warptile, staged);
    c.winners.push_back(padded);
    EXPECT_EQ(workspace_bytes_needed(c), 0u);

    ShapeKey tight = shape(4095, 4097, 4093);
    tight.alignment = 4;
    const std::size_t b_copy = SGEMM_WORKSPACE_COUNTER_BYTES + 4ull * 4093 * 4096;
    Decision d = decide(c, tight, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, workspace_bytes_needed(c));
    EXPECT_EQ(d.route, Route::Cublas) << "no class-4 winner";
    Winner w = padded;
    w.shape = tight;
    c.winners.push_back(w);
    EXPECT_EQ(workspace_bytes_needed(c), b_copy);
    d = decide(c, tight, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, workspace_bytes_needed(c));
    EXPECT_EQ(d.selection.kind, SelectionKind::Exact);
    EXPECT_EQ(d.selection.winner->shape.alignment, 4);
    // The nearest class-4 call in a workspace sized for class 16 alone is passed over.
    tight.N = 4093;
    d = decide(c, tight, SGEMM_DISPATCH_FALLBACK_CUBLAS, Arch{90}, 0);
    EXPECT_EQ(d.route, Route::Cublas);
    EXPECT_TRUE(contains(d.reason, "bytes of staging workspace (each stream holds 0)")) << d.reason;
}

TEST(BuiltinKernel, IsAValidWarptileConfigurationForEveryLayout) {
    const Family& warptile = find_family("warptile");
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            const KernelRef k = builtin_kernel(ta, tb);
            EXPECT_EQ(k.family, "warptile");
            EXPECT_EQ(warptile.invalid_reason(k.params, Arch{90}), "") << k.description;
            EXPECT_TRUE(warptile.reads_transposes(k.params, ta, tb)) << k.description;
            EXPECT_EQ(warptile.workspace_bytes(k.params, 4095, 4097, 4093, 132, 4), 0u) << "no split-K: no workspace";
            EXPECT_EQ(warptile.required_alignment(k.params), 4) << "the fallback serves every alignment class";
        }
}

// explain's account of a staged launch (warptile ALIGNED = 2): the staging kernel copies
// operands only for calls below alignment class 16, computes C's last N mod 4 columns only
// where there are some, and below N = 4 no main kernel follows it.
TEST(StagedLaunch, SaysWhatTheStagingKernelDoesForTheCall) {
    const Family& f = find_family("warptile");
    ParamValues v = f.defaults;
    v[f.param_index("ALIGNED")] = 2;
    ShapeKey key;
    key.M = 4095, key.N = 4097, key.K = 4093, key.alignment = 4;
    EXPECT_EQ(staged_launch(f, v, key, 132, "MAIN"),
              "a staging kernel of 528 blocks that copies the misaligned operands its loop reads 16 bytes at a time "
              "into the workspace and computes C's last column, then MAIN");
    key.N = 4099;
    key.alignment = 16;  // a padded ldc
    EXPECT_EQ(staged_launch(f, v, key, 132, "MAIN"), "a staging kernel of 256 blocks that computes C's last 3 columns, then MAIN");
    key.N = 4096;  // nothing to stage: no staging kernel is launched
    EXPECT_EQ(staged_launch(f, v, key, 132, "MAIN"),
              "MAIN (no staging kernel: the call's rows take 16-byte copies where they are, and N is a multiple of 4)");
    key.M = 9, key.N = 3, key.K = 33, key.alignment = 4;
    EXPECT_EQ(staged_launch(f, v, key, 132, "MAIN"),
              "a staging kernel of 66 blocks that copies the misaligned operands its loop reads 16 bytes at a time "
              "into the workspace and computes C's last 3 columns, then no main kernel (C has fewer than 4 columns)");
}
