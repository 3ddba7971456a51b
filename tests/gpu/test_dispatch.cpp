// libsgemm_dispatch on the GPU, through its public API, against cuBLAS: tuned (exact),
// nearest and fallback shapes with odd sizes, transposes and padded leading dimensions;
// each fallback policy; a binary missing from the cache; 16 threads on 4 streams at once;
// stream capture and graph replay; misses written to the database; bad arguments that touch
// nothing; leading dimensions judged as cuBLAS judges them; a destroyed handle; a handle
// inherited through fork; a call and destroy after a device fault; the per-stream workspace
// limit; a deterministic handle; a winner that stages its operands; rows that cannot be
// read; calls refused for a workspace, which count no miss; a handle on each of two GPUs; a
// stream of another context; a re-split that would pass the shared-memory limit, not made;
// calls of K or alpha 0, which scale C alone, as in BLAS.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sgemm/dispatch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "src/records/kernel_records.h"
#include "templates/sgemm_staging.cuh"
#include "tests/db/fixture.h"
#include "tests/gpu/gpu_test_env.h"
#include "tests/gpu/spinner.h"
#include "tuner/gemm_problem.h"
#include "tuner/tuner.h"

using namespace sgemm;
using sgemm::testing::in_child;
using sgemm::testing::TempDir;

namespace {

// warptile at its defaults with these layouts and split count.
ParamValues warptile(int ta, int tb, int splits) {
    ParamValues v = find_family("warptile").defaults;
    v[8] = ta, v[9] = tb, v[11] = splits;
    return v;
}

// The same with the slices summed by a second kernel, or added into C by atomics.
ParamValues summed_by(ParamValues v, int how) {
    v[find_family("warptile").param_index("SUM_PASS")] = how;
    return v;
}
const ParamValues kDecode = {8, 128, 8, 4, 1, 0, 4, 0, 0};  // MT BN KW UNROLL EF TB SPLITS RING SUM_PASS: split-K

// A call's shape key as the tests make their calls: tight leading dimensions (or padded by
// `pad`) on cudaMalloc'd buffers.
ShapeKey key_of(int M, int N, int K, bool ta, bool tb, int pad = 0) {
    ShapeKey k;
    k.M = M, k.N = N, k.K = K, k.trans_a = ta, k.trans_b = tb;
    k.alignment = packed_alignment(k);
    if (pad) k.alignment = alignment_class(nullptr, (ta ? M : K) + pad, nullptr, tb ? K : N, nullptr, N);
    return k;
}

// The database of these tests, built once (compiling is the slow part): winners of this GPU
//   decode (split-K)      8 x 1000 x 517 NN     (align 4)
//   warptile              200 x 384 x 256 NN, and 96 x 160 x 72 TN, NT and TT
//   warptile SPLITS=2     64 x 64 x 1024 NN
//   the same, SUM_PASS=1  32 x 64 x 2048 NN     (the slices summed by a second kernel)
//   the same, SUM_PASS=2  32 x 64 x 8192 NN     (the slices added into C by atomics)
//   cuBLAS                33 x 65 x 17 NN       (align 4)
// and, to show they are never used, a faster winner of another device for every shape of
// kCases.
struct TestDb {
    TempDir dir;
    std::string path;
    std::string device_id;
    std::string tt_binary_key;
    std::string nn_binary_key, nn_split_binary_key;  // warptile NN without and with split-K
};

struct Case {
    const char* name;
    int M, N, K;
    bool ta, tb;
    int pad;               // added to lda
    const char* decision;  // what explain must say
};

const Case kCases[] = {
    {"decode split-K", 8, 1000, 517, false, false, 0, "exact"},
    {"warptile NN", 200, 384, 256, false, false, 0, "exact"},
    {"warptile TN", 96, 160, 72, true, false, 0, "exact"},
    {"warptile NT", 96, 160, 72, false, true, 0, "exact"},
    {"warptile TT", 96, 160, 72, true, true, 0, "exact"},
    {"warptile split-K", 64, 64, 1024, false, false, 0, "exact"},
    {"warptile split-K, summed by a second kernel", 32, 64, 2048, false, false, 0, "exact"},
    {"warptile split-K, added by atomics", 32, 64, 8192, false, false, 0, "exact"},
    {"cuBLAS winner", 33, 65, 17, false, false, 0, "exact"},
    {"odd sizes near the decode winner", 5, 997, 515, false, false, 0, "nearest"},
    {"near the decode winner, at twice its M: as tuned", 16, 1000, 517, false, false, 0, "nearest"},
    {"near the decode winner, re-split to fit the workspace", 16, 2000, 517, false, false, 0, "nearest"},
    {"near the warptile NN winner", 192, 400, 240, false, false, 0, "nearest"},
    {"near the TN winner", 112, 176, 80, true, false, 0, "nearest"},
    {"odd TN, no TN winner at align 4", 37, 61, 29, true, false, 0, "fallback"},
    {"tiny odd TT", 3, 5, 7, true, true, 0, "fallback"},
    {"one row, odd N and K: no winner within a factor of 2 in M", 1, 1001, 519, false, false, 0, "fallback"},
    {"4095 rows TN: no TN winner at align 4", 4095, 97, 63, true, false, 0, "fallback"},
    {"padded lda: align 4, nearest is cuBLAS", 40, 384, 256, false, false, 1, "nearest"},
    {"padded lda: align 4, every winner more than a factor of 2 away in M", 200, 384, 256, false, false, 1,
     "fallback"},
};
const Case& case_named(const std::string& name) {
    for (const Case& c : kCases)
        if (name == c.name) return c;
    throw Error("no case " + name);
}

const TestDb& test_db(const DeviceInfo& device) {
    static const std::unique_ptr<TestDb> db = [&] {
        auto d = std::make_unique<TestDb>();
        d->path = d->dir.file("tuning.db");
        const Arch arch{device.sm()};
        const auto compile = [arch](const char* family, const ParamValues& v) {
            return std::async(std::launch::async, [=] {
                const Family& f = find_family(family);
                return to_binary(compile_kernel(f, v, arch), kernel_ref(f, v));
            });
        };
        auto decode = compile("decode", kDecode), nn = compile("warptile", warptile(0, 0, 1)),
             tn = compile("warptile", warptile(1, 0, 1)), nt = compile("warptile", warptile(0, 1, 1)),
             tt = compile("warptile", warptile(1, 1, 1)), nn_split = compile("warptile", warptile(0, 0, 2)),
             nn_sum_pass = compile("warptile", summed_by(warptile(0, 0, 2), SGEMM_SUM_BY_PASS)),
             nn_atomics = compile("warptile", summed_by(warptile(0, 0, 2), SGEMM_SUM_BY_ATOMICS));
        const Binary b_decode = decode.get(), b_nn = nn.get(), b_tn = tn.get(), b_nt = nt.get(), b_tt = tt.get(),
                     b_nn_split = nn_split.get(), b_nn_sum_pass = nn_sum_pass.get(), b_nn_atomics = nn_atomics.get();
        d->tt_binary_key = b_tt.cache_key;
        d->nn_binary_key = b_nn.cache_key;
        d->nn_split_binary_key = b_nn_split.cache_key;

        TuningStore store(d->path);
        d->device_id = store.add_device(fingerprint_of(device));
        for (const Binary* b : {&b_decode, &b_nn, &b_tn, &b_nt, &b_tt, &b_nn_split, &b_nn_sum_pass, &b_nn_atomics})
            store.put_binary(*b);
        using sgemm::testing::winner;
        store.put_winner(winner(d->device_id, key_of(8, 1000, 517, false, false), 0.01, &b_decode));
        store.put_winner(winner(d->device_id, key_of(200, 384, 256, false, false), 0.01, &b_nn));
        store.put_winner(winner(d->device_id, key_of(96, 160, 72, true, false), 0.01, &b_tn));
        store.put_winner(winner(d->device_id, key_of(96, 160, 72, false, true), 0.01, &b_nt));
        store.put_winner(winner(d->device_id, key_of(96, 160, 72, true, true), 0.01, &b_tt));
        Winner split = winner(d->device_id, key_of(64, 64, 1024, false, false), 0.01, &b_nn_split);
        split.kernel = kernel_ref(find_family("warptile"), warptile(0, 0, 4));  // the split binary, 4 slices
        store.put_winner(split);
        Winner summed = winner(d->device_id, key_of(32, 64, 2048, false, false), 0.01, &b_nn_sum_pass);
        summed.kernel = kernel_ref(find_family("warptile"), summed_by(warptile(0, 0, 4), SGEMM_SUM_BY_PASS));
        store.put_winner(summed);
        Winner added = winner(d->device_id, key_of(32, 64, 8192, false, false), 0.01, &b_nn_atomics);
        added.kernel = kernel_ref(find_family("warptile"), summed_by(warptile(0, 0, 4), SGEMM_SUM_BY_ATOMICS));
        store.put_winner(added);
        store.put_winner(winner(d->device_id, key_of(33, 65, 17, false, false), 0.01, nullptr));

        DeviceFingerprint other = fingerprint_of(device);
        other.driver_version += 10;
        const std::string other_id = store.add_device(other);
        for (const Case& c : kCases)
            store.put_winner(winner(other_id, key_of(c.M, c.N, c.K, c.ta, c.tb, c.pad), 1e-6, &b_decode));
        return d;
    }();
    return *db;
}

// A copy of the test database, for tests that write to it or edit it.
std::string copy_of_test_db(const TestDb& db, const TempDir& dir) {
    const std::string copy = dir.file("copy.db");
    std::filesystem::copy_file(db.path, copy);
    return copy;
}

sgemm_dispatch_options_t options(const std::string& db_path,
                                 sgemm_dispatch_fallback_t fallback = SGEMM_DISPATCH_FALLBACK_CUBLAS) {
    sgemm_dispatch_options_t o = Dispatch::default_options();
    o.db_path = db_path.c_str();
    o.fallback = fallback;
    return o;
}

// Options that record misses, written every `flush_ms` (kOnlyDestroyWrites: at destroy alone).
constexpr int kOnlyDestroyWrites = 3600 * 1000;
sgemm_dispatch_options_t recording_misses(const std::string& db_path, int flush_ms) {
    sgemm_dispatch_options_t o = options(db_path);
    o.record_misses = 1;
    o.miss_flush_ms = flush_ms;
    return o;
}

ProblemSpec spec_of(const Case& c, float alpha, float beta) {
    ProblemSpec s;
    s.M = c.M, s.N = c.N, s.K = c.K, s.trans_a = c.ta, s.trans_b = c.tb;
    s.lda = c.pad ? (c.ta ? c.M : c.K) + c.pad : 0;
    s.alpha = alpha, s.beta = beta;
    s.seed = 11 + c.M * 7 + c.N * 3 + c.K;
    return s;
}

void run(const Dispatch& dispatch, const GemmProblem& p, cudaStream_t stream) {
    const SgemmArgs a = p.args();
    const ProblemSpec& s = p.spec();
    dispatch.gemm(s.trans_a, s.trans_b, s.M, s.N, s.K, s.alpha, a.A, a.lda, a.B, a.ldb, s.beta, a.C, a.ldc, stream);
}

std::string explain(const Dispatch& dispatch, const GemmProblem& p) {
    const SgemmArgs a = p.args();
    const ProblemSpec& s = p.spec();
    return dispatch.explain(s.trans_a, s.trans_b, s.M, s.N, s.K, a.A, a.lda, a.B, a.ldb, a.C, a.ldc);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A database at `path` whose one winner, at `key`, is warptile at its defaults with staged
// operands (ALIGNED = 2), compiled for `device`.
void store_staged_winner(const std::string& path, const DeviceInfo& device, const ShapeKey& key) {
    const Family& f = find_family("warptile");
    ParamValues staged = f.defaults;
    staged[f.param_index("ALIGNED")] = 2;
    TuningStore store(path);
    const std::string id = store.add_device(fingerprint_of(device));
    const Binary b = to_binary(compile_kernel(f, staged, Arch{device.sm()}), kernel_ref(f, staged));
    store.put_binary(b);
    store.put_winner(sgemm::testing::winner(id, key, 0.01, &b));
}

}  // namespace

TEST(Dispatch, CreateLoadsThisDevicesWinnersFromTheCache) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    const Dispatch dispatch(options(db.path));
    const sgemm_dispatch_info_t info = dispatch.info();
    EXPECT_EQ(info.winners, 9);
    EXPECT_EQ(info.winners_skipped, 0);
    EXPECT_EQ(info.winners_replaced, 0);
    EXPECT_EQ(info.kernels_loaded, 8) << "decode, warptile NN/TN/NT/TT, and NN with 2 slices summed three ways";
    EXPECT_EQ(info.kernels_compiled, 0) << "every binary is in the cache";
    EXPECT_EQ(info.shapes_prepared, 9) << "a plan for every winner's shape";
    // The decode winner's 4 slices of partials at every M the nearest rule gives it at its own
    // N and K: up to 16, where the cuBLAS winner at M=33 comes as near.
    EXPECT_EQ(info.workspace_bytes, sgemm_splitk_workspace_bytes(4, 16, 1000));
    std::printf("cold start: %.1f ms in all (device %.1f, database %.1f, kernels %.1f, memory %.1f) for %d winners\n",
                info.create_ms, info.device_ms, info.database_ms, info.kernels_ms, info.memory_ms, info.winners);
}

TEST(Dispatch, TunedNearestAndFallbackShapesMatchCublas) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    for (const Case& c : kCases)
        for (float beta : {0.0f, 0.5f}) {
            SCOPED_TRACE(std::string(c.name) + (beta != 0 ? ", beta 0.5" : ", beta 0"));
            GemmProblem p(spec_of(c, 0.75f, beta), gpu->cublas, gpu->stream.get());
            p.poison_output(gpu->stream.get());
            run(dispatch, p, gpu->stream.get());
            const Accuracy a = p.check_output();
            EXPECT_TRUE(a.ok()) << a.verdict();
            const std::string why = explain(dispatch, p);
            EXPECT_TRUE(contains(why, std::string("decision  ") + c.decision)) << why;
        }
}

// A winner that stages its operands (warptile ALIGNED = 2) at a shape of tight, misaligned
// rows: the handle sizes each stream's workspace for the staged copy of B, the staging kernel
// runs before the main one in the caller's stream, and explain says so. Also captured in a
// graph, whose replay keeps the two kernels in order.
TEST(Dispatch, AStagedWinnerRunsItsStagingKernelFirst) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const std::string path = dir.file("staged.db");
    const Case c{"staged", 300, 301, 299, false, false, 0, "exact"};
    store_staged_winner(path, gpu->device, key_of(c.M, c.N, c.K, false, false));
    const Dispatch dispatch(options(path));
    EXPECT_EQ(dispatch.info().workspace_bytes,
              (sgemm_staged_workspace_bytes(0, 0, 0, 0, c.M, c.N, c.K) + 255) / 256 * 256);
    for (float beta : {0.0f, 0.5f}) {
        GemmProblem p(spec_of(c, 0.75f, beta), gpu->cublas, gpu->stream.get());
        p.poison_output(gpu->stream.get());
        run(dispatch, p, gpu->stream.get());
        const Accuracy a = p.check_output();
        EXPECT_TRUE(a.ok()) << "beta " << beta << ": " << a.verdict();
        const std::string why = explain(dispatch, p);
        EXPECT_TRUE(contains(why, "decision  exact")) << why;
        EXPECT_TRUE(contains(why, "launch    a staging kernel of")) << why;
        EXPECT_TRUE(contains(why, "computes C's last column, then warptile")) << why;
    }
    GemmProblem p(spec_of(c, -1.25f, 0.0f), gpu->cublas, gpu->stream.get());
    p.poison_output(gpu->stream.get());
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(gpu->stream.get(), cudaStreamCaptureModeGlobal), cudaSuccess);
    run(dispatch, p, gpu->stream.get());
    ASSERT_EQ(cudaStreamEndCapture(gpu->stream.get(), &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, gpu->stream.get()), cudaSuccess);
    const Accuracy a = p.check_output();
    EXPECT_TRUE(a.ok()) << "graph replay: " << a.verdict();
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
}

// The same binary tuned at alignment class 16 (padded rows, 301 columns): its staging kernel
// has only C's last column to compute, so the handle gives the streams no workspace and the
// calls claim none (max_streams 1, two streams, nothing in use after). At 300 columns, the
// nearest shape, it has nothing to do and is not launched: a captured call holds one kernel,
// not two. Both match cuBLAS.
TEST(Dispatch, AStagedWinnerOfClass16NeedsNoWorkspaceAndStagesOnlyWhatTheCallNeeds) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const std::string path = dir.file("staged16.db");
    const auto padded = [](int n) {
        ProblemSpec s;
        s.M = 300, s.N = n, s.K = 299, s.lda = 300, s.ldb = 304, s.ldc = 304, s.alpha = 0.75f, s.beta = 0.5f;
        s.seed = 77 + n;
        return s;
    };
    ShapeKey key = key_of(300, 301, 299, false, false);
    key.alignment = 16;
    store_staged_winner(path, gpu->device, key);
    sgemm_dispatch_options_t o = options(path);
    o.fallback = SGEMM_DISPATCH_FALLBACK_ERROR;  // only the staged winner may serve
    o.max_streams = 1;
    const Dispatch dispatch(o);
    EXPECT_EQ(dispatch.info().workspace_bytes, 0u);
    Stream first, second;
    for (const auto& [n, stream, expected, kernels] : {std::tuple{301, first.get(), "a staging kernel of", 2u},
                                                        std::tuple{300, second.get(), "(no staging kernel:", 1u}}) {
        GemmProblem p(padded(n), gpu->cublas, gpu->stream.get());
        const SgemmArgs a = p.args();
        ASSERT_EQ(alignment_class(a.A, a.lda, a.B, a.ldb, a.C, a.ldc), 16);
        p.poison_output(gpu->stream.get());
        gpu->stream.synchronize();
        cudaGraph_t graph = nullptr;
        ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
        run(dispatch, p, stream);
        ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
        std::size_t nodes = 0;
        ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
        EXPECT_EQ(nodes, kernels) << "N " << n;
        cudaGraphExec_t exec = nullptr;
        ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
        ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
        const Accuracy accuracy = p.check_output();
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        EXPECT_TRUE(accuracy.ok()) << "N " << n << ": " << accuracy.verdict();
        const std::string why = explain(dispatch, p);
        EXPECT_TRUE(contains(why, expected)) << why;
        EXPECT_TRUE(contains(why, " 0 bytes of workspace")) << why;
    }
    EXPECT_EQ(dispatch.info().streams_used, 0);
}

TEST(Dispatch, ExplainNamesTheKernelItsLaunchAndTheRule) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    std::string text = dispatch.explain(false, false, 8, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    EXPECT_TRUE(contains(text, "decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=4 RING=0 SUM_PASS=0")) << text;
    EXPECT_TRUE(contains(text, "bytes of workspace")) << text;
    text = dispatch.explain(false, false, 33, 65, 17, nullptr, 17, nullptr, 65, nullptr, 65);
    EXPECT_TRUE(contains(text, "launch    cuBLAS")) << text;
    // 32 x 64 in groups of 4 is 512, 64 groups a block: 8 blocks.
    text = dispatch.explain(false, false, 32, 64, 2048, nullptr, 2048, nullptr, 64, nullptr, 64);
    EXPECT_TRUE(contains(text, "then a pass of 8 blocks that sums the 4 slices")) << text;
    text = dispatch.explain(false, false, 32, 64, 8192, nullptr, 8192, nullptr, 64, nullptr, 64);
    EXPECT_TRUE(contains(text, "its 4 slices add into C with float atomics, so C varies in the last bits")) << text;
    EXPECT_TRUE(contains(text, std::to_string(SGEMM_WORKSPACE_COUNTER_BYTES) + " bytes of workspace")) << text;
    // 4 slices of 16 x 2000 would overflow the workspace sized for 16 x 1000: 2 slices run.
    text = dispatch.explain(false, false, 16, 2000, 517, nullptr, 517, nullptr, 2000, nullptr, 2000);
    EXPECT_TRUE(contains(text, "re-split as decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=2 RING=0 SUM_PASS=0")) << text;
    EXPECT_TRUE(contains(text, "grid 2 x 2 x 16")) << text;  // 2 blocks of 8 rows, 2 slices, 16 of 128 columns
    // At the winner's own N and K, twice its M runs as tuned.
    text = dispatch.explain(false, false, 16, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    EXPECT_TRUE(contains(text, "launch    decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=4 RING=0 SUM_PASS=0")) << text;
    EXPECT_FALSE(contains(text, "re-split")) << text;
    text = dispatch.explain(true, false, 37, 61, 29, nullptr, 37, nullptr, 61, nullptr, 61);
    EXPECT_TRUE(contains(text, "fallback policy: cuBLAS")) << text;
    text = dispatch.explain(false, false, 8, 1000, 517, nullptr, 100, nullptr, 1000, nullptr, 1000);
    EXPECT_TRUE(contains(text, "SGEMM_DISPATCH_INVALID_LEADING_DIMENSION")) << text;
    text = dispatch.explain(false, false, 0, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    EXPECT_TRUE(contains(text, "launch    nothing: M or N is 0, an empty product")) << text;
    text = dispatch.explain(false, false, 8, 1000, 0, nullptr, 1, nullptr, 1000, nullptr, 1000);
    EXPECT_TRUE(contains(text, "shape     M=8 N=1000 K=0 NN fp32")) << text;
    EXPECT_TRUE(contains(text, "launch    C = beta * C alone, as in BLAS: K is 0")) << text;
}

// The explanation's text from the database file (a winner's time, the GPU's name) comes escaped:
// a newline in it shows as \x0a in its own line, and makes no line of its own.
TEST(Dispatch, ExplainEscapesTheDatabasesText) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const std::string edited = copy_of_test_db(test_db(gpu->device), dir);
    TuningStore(edited).connection().exec("UPDATE winners SET tuned_at = tuned_at || char(10) || 'FAKE LINE'");
    const Dispatch dispatch(options(edited));
    const std::string text = dispatch.explain(false, false, 8, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    EXPECT_TRUE(contains(text, "\\x0aFAKE LINE")) << text;
    EXPECT_FALSE(contains(text, "\nFAKE LINE")) << text;
}

// options.deterministic runs the atomic winner as its twin, the same tiles and 4 slices
// summed by the second kernel, from the summed winner's binary (nothing is compiled): C is
// right and the same bits run after run.
TEST(Dispatch, ADeterministicHandleRunsAtomicWinnersWithoutAtomics) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm_dispatch_options_t o = options(test_db(gpu->device).path);
    o.deterministic = 1;
    const Dispatch dispatch(o);
    const sgemm_dispatch_info_t info = dispatch.info();
    EXPECT_EQ(info.winners, 9);
    EXPECT_EQ(info.winners_skipped, 0);
    EXPECT_EQ(info.winners_replaced, 1);
    EXPECT_EQ(info.kernels_loaded, 7) << "the atomic binary is not loaded";
    EXPECT_EQ(info.kernels_compiled, 0) << "the twin's binary is the summed winner's";

    const Case& c = case_named("warptile split-K, added by atomics");
    GemmProblem p(spec_of(c, 0.75f, 0.0f), gpu->cublas, gpu->stream.get());
    const std::string why = explain(dispatch, p);
    EXPECT_TRUE(contains(why, "decision  exact")) << why;
    EXPECT_TRUE(contains(why, "then a pass of 8 blocks that sums the 4 slices")) << why;
    EXPECT_TRUE(contains(why, " stands in for the tuned kernel, ")) << why;
    EXPECT_FALSE(contains(why, "so C varies in the last bits")) << why;
    EXPECT_TRUE(contains(why, "runs warptile")) << "the database line names the stand-in: " << why;
    std::vector<float> first;
    for (int run_index = 0; run_index < 5; ++run_index) {
        SCOPED_TRACE("run " + std::to_string(run_index));
        p.poison_output(gpu->stream.get());
        run(dispatch, p, gpu->stream.get());
        const Accuracy a = p.check_output();
        EXPECT_TRUE(a.ok()) << a.verdict();
        const std::vector<float> out = p.download_output();
        if (run_index == 0) first = out;
        ASSERT_EQ(out.size(), first.size());
        EXPECT_EQ(std::memcmp(out.data(), first.data(), out.size() * sizeof(float)), 0) << "C differs from the first run";
    }
}

// With the tune's measurements stored, the stand-in is the fastest kernel without atomics
// measured for the shape: here warptile NN in 2 slices summed in the kernel, from the cache.
TEST(Dispatch, ADeterministicHandleRunsTheFastestMeasuredKernelWithoutAtomics) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir;
    const std::string path = copy_of_test_db(db, dir);
    const Case& c = case_named("warptile split-K, added by atomics");
    {
        TuningStore store(path);
        Measurement m = sgemm::testing::measurement(db.device_id, key_of(c.M, c.N, c.K, c.ta, c.tb), 0.005);
        m.kernel = kernel_ref(find_family("warptile"), warptile(0, 0, 2));
        store.record_measurement(m);
    }
    sgemm_dispatch_options_t o = options(path);
    o.deterministic = 1;
    const Dispatch dispatch(o);
    EXPECT_EQ(dispatch.info().kernels_compiled, 0) << "the split binary is in the cache";
    for (float beta : {0.0f, 0.5f}) {
        GemmProblem p(spec_of(c, 0.75f, beta), gpu->cublas, gpu->stream.get());
        const std::string why = explain(dispatch, p);
        EXPECT_TRUE(contains(why, "the fastest kernel without atomics measured for this shape (0.0050 ms")) << why;
        EXPECT_TRUE(contains(why, "launch    " + kernel_ref(find_family("warptile"), warptile(0, 0, 2)).description))
            << why;
        p.poison_output(gpu->stream.get());
        run(dispatch, p, gpu->stream.get());
        const Accuracy a = p.check_output();
        EXPECT_TRUE(a.ok()) << "beta " << beta << ": " << a.verdict();
    }
}

// prepare does what gemm's first call of a shape key does before it launches: the key gets its
// plan, once, with no stream's workspace taken; gemm then finds it ready and computes right.
TEST(Dispatch, PrepareMakesAShapesPlanWithoutALaunch) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    const int before = dispatch.info().shapes_prepared;
    dispatch.prepare(false, false, 4, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);  // nearest: decode
    EXPECT_EQ(dispatch.info().shapes_prepared, before + 1);
    dispatch.prepare(false, false, 4, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    dispatch.prepare(false, false, 0, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);  // empty: nothing
    EXPECT_EQ(dispatch.info().shapes_prepared, before + 1);
    EXPECT_EQ(dispatch.info().streams_used, 0);
    EXPECT_EQ(sgemm_dispatch_prepare(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 4, 1000, 517, nullptr,
                                     100, nullptr, 1000, nullptr, 1000),
              SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_EQ(dispatch.info().shapes_prepared, before + 1);

    ProblemSpec spec;
    spec.M = 4, spec.N = 1000, spec.K = 517;
    GemmProblem p(spec, gpu->cublas, gpu->stream.get());
    p.poison_output(gpu->stream.get());
    run(dispatch, p, gpu->stream.get());
    const Accuracy a = p.check_output();
    EXPECT_TRUE(a.ok()) << a.verdict();
    EXPECT_EQ(dispatch.info().shapes_prepared, before + 1) << "gemm found the prepared plan";

    // Under the ERROR fallback a shape without a winner is NO_KERNEL, as gemm would return.
    const Dispatch strict(options(test_db(gpu->device).path, SGEMM_DISPATCH_FALLBACK_ERROR));
    EXPECT_EQ(sgemm_dispatch_prepare(strict.get(), SGEMM_DISPATCH_OP_T, SGEMM_DISPATCH_OP_N, 37, 61, 29, nullptr, 37,
                                     nullptr, 61, nullptr, 61),
              SGEMM_DISPATCH_NO_KERNEL);
    const std::string refused = sgemm_dispatch_last_error();
    EXPECT_NE(refused.find("no winner for M=37 N=61 K=29 TN fp32 align"), std::string::npos) << refused;
    EXPECT_NE(refused.find(", and the fallback policy is ERROR"), std::string::npos) << refused;
    // Under the BUILTIN fallback, a size whose tile counts would wrap in the built-in kernel
    // (K within 4096 of 2^31) is NO_KERNEL too, and says so, rather than launched to wrap.
    const Dispatch builtin(options(test_db(gpu->device).path, SGEMM_DISPATCH_FALLBACK_BUILTIN));
    const int huge_k = INT_MAX - 14;
    EXPECT_EQ(sgemm_dispatch_prepare(builtin.get(), SGEMM_DISPATCH_OP_T, SGEMM_DISPATCH_OP_T, 1, 64, huge_k, nullptr, 1,
                                     nullptr, huge_k, nullptr, 64),
              SGEMM_DISPATCH_NO_KERNEL)
        << sgemm_dispatch_last_error();
    EXPECT_NE(std::string(sgemm_dispatch_last_error()).find("the built-in kernel of the fallback policy cannot run it"),
              std::string::npos)
        << sgemm_dispatch_last_error();
}

TEST(Dispatch, QueryGivesExplainsDecisionAsFields) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    sgemm_dispatch_choice_t c = dispatch.query(false, false, 8, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    EXPECT_EQ(c.decision, SGEMM_DISPATCH_DECISION_EXACT);
    EXPECT_EQ(c.route, SGEMM_DISPATCH_ROUTE_KERNEL);
    EXPECT_STREQ(c.kernel, "decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=4 RING=0 SUM_PASS=0");
    c = dispatch.query(false, false, 33, 65, 17, nullptr, 17, nullptr, 65, nullptr, 65);
    EXPECT_EQ(c.route, SGEMM_DISPATCH_ROUTE_CUBLAS);
    EXPECT_STREQ(c.kernel, "");
    c = dispatch.query(true, false, 37, 61, 29, nullptr, 37, nullptr, 61, nullptr, 61);
    EXPECT_EQ(c.decision, SGEMM_DISPATCH_DECISION_FALLBACK);
    EXPECT_EQ(c.route, SGEMM_DISPATCH_ROUTE_CUBLAS);
    c = dispatch.query(false, false, 0, 1000, 517, nullptr, 517, nullptr, 1000, nullptr, 1000);
    EXPECT_EQ(c.decision, SGEMM_DISPATCH_DECISION_EMPTY);
    EXPECT_EQ(c.route, SGEMM_DISPATCH_ROUTE_NONE);
    // Bad arguments: gemm's status, and the choice left as it was.
    c.decision = SGEMM_DISPATCH_DECISION_NEAREST;
    EXPECT_EQ(sgemm_dispatch_query(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 8, 1000, 517, nullptr, 100,
                                   nullptr, 1000, nullptr, 1000, &c),
              SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_EQ(c.decision, SGEMM_DISPATCH_DECISION_NEAREST);
    // Under the ERROR fallback a shape without a winner runs nothing.
    const Dispatch strict(options(test_db(gpu->device).path, SGEMM_DISPATCH_FALLBACK_ERROR));
    c = strict.query(true, false, 37, 61, 29, nullptr, 37, nullptr, 61, nullptr, 61);
    EXPECT_EQ(c.decision, SGEMM_DISPATCH_DECISION_FALLBACK);
    EXPECT_EQ(c.route, SGEMM_DISPATCH_ROUTE_NONE);
}

TEST(Dispatch, TheBuiltInFallbackComesFromTheCacheAndIsRight) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path, SGEMM_DISPATCH_FALLBACK_BUILTIN));
    EXPECT_EQ(dispatch.info().kernels_compiled, 0) << "the four built-in kernels are the tuned warptile binaries";
    for (const char* name : {"odd TN, no TN winner at align 4", "tiny odd TT",
                             "one row, odd N and K: no winner within a factor of 2 in M",
                             "4095 rows TN: no TN winner at align 4"}) {
        SCOPED_TRACE(name);
        GemmProblem p(spec_of(case_named(name), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
        p.poison_output(gpu->stream.get());
        run(dispatch, p, gpu->stream.get());
        const Accuracy a = p.check_output();
        EXPECT_TRUE(a.ok()) << a.verdict();
        EXPECT_TRUE(contains(explain(dispatch, p), "fallback policy: the built-in kernel, warptile"));
    }
}

TEST(Dispatch, TheErrorFallbackRefusesWhatHasNoWinner) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path, SGEMM_DISPATCH_FALLBACK_ERROR));
    GemmProblem fallback(spec_of(case_named("tiny odd TT"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    try {
        run(dispatch, fallback, gpu->stream.get());
        ADD_FAILURE() << "no kernel, yet no error";
    } catch (const DispatchError& e) {
        EXPECT_EQ(e.status(), SGEMM_DISPATCH_NO_KERNEL) << e.what();
    }
    GemmProblem tuned(spec_of(case_named("decode split-K"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    run(dispatch, tuned, gpu->stream.get());
    EXPECT_TRUE(tuned.check_output().ok());
}

namespace {

// C's rows for the tests of C scaled alone: `rows` x `columns` values, each row padded to
// `ldc` with kPadding, which no call may touch.
constexpr float kPadding = 12345.0f;
std::vector<float> c_rows(int rows, int columns, int ldc) {
    std::vector<float> c(static_cast<std::size_t>(rows) * ldc, kPadding);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < columns; ++j) c[static_cast<std::size_t>(i) * ldc + j] = 0.25f * ((i * 7 + j) % 61) - 3.0f;
    return c;
}

// How many elements of `after` are not `before` scaled by `beta` (0 where beta is 0, as BLAS
// gives, whatever `before` held), padding that changed included; the first is named in `first`.
int scaled_wrongly(const std::vector<float>& before, const std::vector<float>& after, int columns, int ldc, float beta,
                   std::string& first) {
    int wrong = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
        const bool padding = static_cast<int>(i % ldc) >= columns;
        const float want = padding ? kPadding : beta == 0.0f ? 0.0f : beta * before[i];
        if (after[i] == want) continue;
        if (wrong++ == 0)
            first = "element " + std::to_string(i) + (padding ? " (padding)" : "") + ": " + std::to_string(after[i]) +
                    ", not " + std::to_string(want);
    }
    return wrong;
}

}  // namespace

// As BLAS: with K or alpha 0, C = beta * C alone, and A and B are not read (NULL, or full of
// NaN that must not reach C). Under the ERROR fallback, with no workspace taken, no plan made
// and no miss counted.
TEST(Dispatch, ACallWithKOrAlphaZeroScalesCAloneAsBlasDoes) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const std::string path = copy_of_test_db(test_db(gpu->device), dir);  // outlives the options' pointer
    sgemm_dispatch_options_t o = recording_misses(path, kOnlyDestroyWrites);
    o.fallback = SGEMM_DISPATCH_FALLBACK_ERROR;
    const Dispatch dispatch(o);
    const int plans = dispatch.info().shapes_prepared;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const int M = 7, N = 17, K = 29, ldc = 19;
    DeviceBuffer<float> c(static_cast<std::size_t>(M) * ldc), operand(static_cast<std::size_t>(M) * K + K * N);
    operand.upload(std::vector<float>(operand.size(), nan));
    struct ScaleCase {
        const char* what;
        int k;
        float alpha, beta;
        bool null_operands, nan_in_c;
    };
    for (const ScaleCase& s : {ScaleCase{"K = 0, beta = 0.5, A and B NULL", 0, 1.0f, 0.5f, true, false},
                               ScaleCase{"K = 0, beta = 1: nothing to do", 0, 1.0f, 1.0f, true, false},
                               ScaleCase{"K = 0, beta = 0: NaN in C overwritten", 0, 1.0f, 0.0f, true, true},
                               ScaleCase{"alpha = 0, A and B all NaN, beta = -2", K, 0.0f, -2.0f, false, false},
                               ScaleCase{"alpha = -0, A and B NULL, beta = 0", K, -0.0f, 0.0f, true, true},
                               ScaleCase{"K = 0 with alpha NaN, beta = 3", 0, nan, 3.0f, true, false}}) {
        SCOPED_TRACE(s.what);
        std::vector<float> before = c_rows(M, N, ldc);
        if (s.nan_in_c)
            for (std::size_t i = 0; i < before.size(); ++i)
                if (static_cast<int>(i % ldc) < N) before[i] = nan;
        c.upload(before);
        const float* ab = s.null_operands ? nullptr : operand.data();
        dispatch.gemm(false, false, M, N, s.k, s.alpha, ab, std::max(1, s.k), ab, N, s.beta, c.data(), ldc,
                      gpu->stream.get());
        gpu->stream.synchronize();
        std::string first;
        EXPECT_EQ(scaled_wrongly(before, c.download(), N, ldc, s.beta, first), 0) << first;
    }
    // More rows than a grid has blocks in y (65535), and TT, whose A and B are NULL; then rows
    // longer than the grid's threads in x (64 blocks of 256), as lm_head's 128256 columns.
    for (const auto& [rows, columns, row_length] : {std::tuple{70001, 3, 5}, std::tuple{3, 20001, 20003}}) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(columns));
        DeviceBuffer<float> big_c(static_cast<std::size_t>(rows) * row_length);
        const std::vector<float> big_before = c_rows(rows, columns, row_length);
        big_c.upload(big_before);
        dispatch.gemm(true, true, rows, columns, 0, 1.0f, nullptr, rows, nullptr, 1, -1.5f, big_c.data(), row_length,
                      gpu->stream.get());
        gpu->stream.synchronize();
        std::string first;
        EXPECT_EQ(scaled_wrongly(big_before, big_c.download(), columns, row_length, -1.5f, first), 0) << first;
    }

    const sgemm_dispatch_info_t info = dispatch.info();
    EXPECT_EQ(info.shapes_prepared, plans);
    EXPECT_EQ(info.streams_used, 0);
    EXPECT_EQ(info.misses_pending, 0) << "there is no product to tune";

    // A NaN alpha with K above 0 is a product, NaN * A * B: every element of C becomes NaN,
    // where C scaled alone by beta would stay finite. (The nearest rule serves this shape.)
    c.upload(c_rows(M, N, ldc));
    dispatch.gemm(false, false, M, N, K, nan, operand.data(), K, operand.data(), N, 0.5f, c.data(), ldc,
                  gpu->stream.get());
    gpu->stream.synchronize();
    const std::vector<float> product = c.download();
    int finite = 0;
    for (std::size_t i = 0; i < product.size(); ++i) finite += static_cast<int>(i % ldc) < N && !std::isnan(product[i]);
    EXPECT_EQ(finite, 0) << "a NaN alpha scaled C alone";

    // query and explain, which take no alpha, say so for K = 0; so does prepare (whose loading
    // of the kernel PrepareOfKZeroLoadsTheKernelThatScalesC checks).
    const sgemm_dispatch_choice_t choice = dispatch.query(false, false, M, N, 0, nullptr, 1, nullptr, N, nullptr, ldc);
    EXPECT_EQ(choice.decision, SGEMM_DISPATCH_DECISION_SCALE_C);
    EXPECT_EQ(choice.route, SGEMM_DISPATCH_ROUTE_SCALE_C);
    EXPECT_STREQ(choice.kernel, "");
    const std::string text = dispatch.explain(false, false, M, N, 0, nullptr, 1, nullptr, N, nullptr, ldc);
    EXPECT_TRUE(contains(text, "C = beta * C alone, as in BLAS: K is 0, so A and B are not read")) << text;
    EXPECT_EQ(sgemm_dispatch_prepare(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, 0, nullptr, 1,
                                     nullptr, N, nullptr, ldc),
              SGEMM_DISPATCH_SUCCESS)
        << sgemm_dispatch_last_error();

    // C is still read and written, so it is checked as before.
    EXPECT_EQ(sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, 0, 1.0f, nullptr, 1,
                                  nullptr, N, 2.0f, nullptr, ldc, gpu->stream.get()),
              SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_TRUE(contains(sgemm_dispatch_last_error(), "C is NULL")) << sgemm_dispatch_last_error();
    EXPECT_EQ(sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, K, 0.0f, nullptr, K,
                                  nullptr, N, 2.0f, reinterpret_cast<float*>(reinterpret_cast<char*>(c.data()) + 2), ldc,
                                  gpu->stream.get()),
              SGEMM_DISPATCH_MISALIGNED);
    EXPECT_TRUE(contains(sgemm_dispatch_last_error(), "must be 4-byte aligned")) << sgemm_dispatch_last_error();
}

// prepare with k = 0 compiles and loads the kernel that scales C, once: the handle's first
// call with a beta other than 0 and 1 then does no host work for it. A beta of 0 (a memset)
// and of 1 (nothing) need no kernel, and load none.
TEST(Dispatch, PrepareOfKZeroLoadsTheKernelThatScalesC) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    const sgemm_dispatch_info_t at_create = dispatch.info();
    const int M = 5, N = 9, ldc = 11;
    DeviceBuffer<float> c(static_cast<std::size_t>(M) * ldc);
    const std::vector<float> before = c_rows(M, N, ldc);
    for (const float beta : {1.0f, 0.0f}) {
        c.upload(before);
        dispatch.gemm(false, false, M, N, 0, 1.0f, nullptr, 1, nullptr, N, beta, c.data(), ldc, gpu->stream.get());
        gpu->stream.synchronize();
        std::string first;
        EXPECT_EQ(scaled_wrongly(before, c.download(), N, ldc, beta, first), 0) << "beta " << beta << ": " << first;
        EXPECT_EQ(dispatch.info().kernels_loaded, at_create.kernels_loaded) << "beta " << beta;
    }

    for (int again = 0; again < 2; ++again) {
        ASSERT_EQ(sgemm_dispatch_prepare(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, 0, nullptr, 1,
                                         nullptr, N, nullptr, ldc),
                  SGEMM_DISPATCH_SUCCESS)
            << sgemm_dispatch_last_error();
        const sgemm_dispatch_info_t prepared = dispatch.info();
        EXPECT_EQ(prepared.kernels_loaded, at_create.kernels_loaded + 1);
        EXPECT_EQ(prepared.kernels_compiled, at_create.kernels_compiled + 1);
        EXPECT_EQ(prepared.compile_ms, at_create.compile_ms) << "compile_ms is create's";
        EXPECT_EQ(prepared.shapes_prepared, at_create.shapes_prepared) << "no plan for a call without a product";
    }

    c.upload(before);
    dispatch.gemm(false, false, M, N, 0, 1.0f, nullptr, 1, nullptr, N, -0.25f, c.data(), ldc, gpu->stream.get());
    gpu->stream.synchronize();
    std::string first;
    EXPECT_EQ(scaled_wrongly(before, c.download(), N, ldc, -0.25f, first), 0) << first;
    EXPECT_EQ(dispatch.info().kernels_loaded, at_create.kernels_loaded + 1);
}

// Where NVRTC refuses the kernel that scales C, a call that needs it is a compile error that
// names the kernel and NVRTC's log, and leaves C as it was; so is prepare, and so is the next
// call (the refusal is kept: ScaleC's own tests see that NVRTC is not asked again). Betas of 0
// and 1, which need no kernel, and a product still run. The meson test 'gpu_tests with the
// kernel that scales C refused' runs it with an NVRTC preloaded that refuses scale_c.cu
// (tests/tuner/nvrtc_refuses_compiles.cpp); run alone, it skips.
TEST(Dispatch, ARefusedCompileOfTheKernelThatScalesCIsACompileError) {
    const char* refused = std::getenv("NVRTC_REFUSE");
    if (!refused || std::string(refused) != "scale_c.cu")
        GTEST_SKIP() << "needs NVRTC_REFUSE=scale_c.cu and libnvrtc_refuses_compiles.so preloaded, as its meson test "
                        "runs it";
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    const sgemm_dispatch_info_t at_create = dispatch.info();
    const int M = 5, N = 9, ldc = 11;
    DeviceBuffer<float> c(static_cast<std::size_t>(M) * ldc);
    const std::vector<float> before = c_rows(M, N, ldc);
    c.upload(before);
    for (int again = 0; again < 2; ++again) {
        EXPECT_EQ(sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, 0, 1.0f, nullptr, 1,
                                      nullptr, N, 0.5f, c.data(), ldc, gpu->stream.get()),
                  SGEMM_DISPATCH_COMPILE_ERROR)
            << "call " << again + 1;
        const std::string error = sgemm_dispatch_last_error();
        EXPECT_TRUE(contains(error, "compiling the kernel that scales C alone (K or alpha is 0)")) << error;
        EXPECT_TRUE(contains(error, "planted_by_tune_cli")) << "NVRTC's log: " << error;
    }
    EXPECT_EQ(sgemm_dispatch_prepare(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, 0, nullptr, 1,
                                     nullptr, N, nullptr, ldc),
              SGEMM_DISPATCH_COMPILE_ERROR);
    gpu->stream.synchronize();
    EXPECT_EQ(c.download(), before) << "C changed by a call that failed";
    EXPECT_EQ(dispatch.info().kernels_loaded, at_create.kernels_loaded) << "a refused kernel counted as loaded";

    for (const float beta : {1.0f, 0.0f}) {
        c.upload(before);
        EXPECT_EQ(sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, 0, 1.0f, nullptr,
                                      1, nullptr, N, beta, c.data(), ldc, gpu->stream.get()),
                  SGEMM_DISPATCH_SUCCESS)
            << "beta " << beta << ": " << sgemm_dispatch_last_error();
        gpu->stream.synchronize();
        std::string first;
        EXPECT_EQ(scaled_wrongly(before, c.download(), N, ldc, beta, first), 0) << "beta " << beta << ": " << first;
    }
    const int K = 16;
    DeviceBuffer<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N);
    a.upload(std::vector<float>(a.size(), 1.0f));
    b.upload(std::vector<float>(b.size(), 0.5f));
    c.upload(before);
    EXPECT_EQ(sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, N, K, 1.0f, a.data(), K,
                                  b.data(), N, 0.0f, c.data(), ldc, gpu->stream.get()),
              SGEMM_DISPATCH_SUCCESS)
        << sgemm_dispatch_last_error();
    gpu->stream.synchronize();
    const std::vector<float> product = c.download();
    for (int row = 0; row < M; ++row)
        for (int column = 0; column < N; ++column)
            ASSERT_EQ(product[static_cast<std::size_t>(row) * ldc + column], 8.0f) << "C(" << row << ", " << column << ")";
}

// The most rows a call may have (2^31 - 1, one column: 8 GiB of C): the kernel's row index
// must not wrap as it strides past them. A 32-bit index wraps to some 8 GiB before C: a fault,
// which the wait reports (synchronize throws), or a write into whatever lies there. A guard
// just before C, and C's first and last rows, are checked; every byte of C is 0x40
// (3.0039215f), which beta = 0.5 halves exactly; every byte of the guard is 0x7f.
TEST(Dispatch, ScalingTheMostRowsACallMayHaveStaysWithinC) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    const int rows = INT_MAX;
    const std::size_t guard = 1 << 20;  // floats
    DeviceBuffer<float> memory(guard + static_cast<std::size_t>(rows));
    ASSERT_EQ(cudaMemset(memory.data(), 0x7f, guard * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(memory.data() + guard, 0x40, static_cast<std::size_t>(rows) * sizeof(float)), cudaSuccess);
    float* c = memory.data() + guard;
    dispatch.gemm(false, false, rows, 1, 0, 1.0f, nullptr, 1, nullptr, 1, 0.5f, c, 1, gpu->stream.get());
    gpu->stream.synchronize();

    float pattern = 0, sentinel = 0;
    std::memset(&pattern, 0x40, sizeof pattern);
    std::memset(&sentinel, 0x7f, sizeof sentinel);
    const auto floats_at = [](const float* from, std::size_t count) {
        std::vector<float> host(count);
        EXPECT_EQ(cudaMemcpy(host.data(), from, count * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        return host;
    };
    int wrong = 0;
    for (const float x : floats_at(memory.data(), guard)) wrong += std::memcmp(&x, &sentinel, sizeof x) != 0;
    EXPECT_EQ(wrong, 0) << "the guard before C was written";
    const std::size_t ends = 1 << 20;
    for (const float* from : {c, c + rows - ends}) {
        wrong = 0;
        for (const float x : floats_at(from, ends)) wrong += x != 0.5f * pattern;
        EXPECT_EQ(wrong, 0) << (from == c ? "C's first rows" : "C's last rows");
    }
}

// The first call that scales C by a beta other than 0 and 1 compiles and loads its kernel:
// inside a capture in global mode too, as a key's first call does its host work. The graph
// then replays the scaling and a memset (beta = 0) with the GEMM between them.
TEST(Dispatch, ACapturedCallThatScalesCAloneCompilesItsKernelAndReplays) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    Stream stream;
    const int M = 33, N = 65, ldc = 67;
    DeviceBuffer<float> scaled(static_cast<std::size_t>(M) * ldc), zeroed(static_cast<std::size_t>(M) * ldc);
    const std::vector<float> before = c_rows(M, N, ldc);
    GemmProblem gemm(spec_of(case_named("decode split-K"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    gpu->stream.synchronize();

    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal), cudaSuccess);
    std::string error;
    try {
        dispatch.gemm(false, false, M, N, 0, 1.0f, nullptr, 1, nullptr, N, 3.0f, scaled.data(), ldc, stream.get());
        gemm.poison_output(stream.get());
        run(dispatch, gemm, stream.get());
        dispatch.gemm(false, false, M, N, 40, 0.0f, nullptr, 40, nullptr, N, 0.0f, zeroed.data(), ldc, stream.get());
    } catch (const std::exception& e) {
        error = e.what();
    }
    ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess);
    ASSERT_EQ(error, "");
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int replay = 0; replay < 2; ++replay) {
        SCOPED_TRACE("replay " + std::to_string(replay));
        scaled.upload(before);
        zeroed.upload(before);
        ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
        stream.synchronize();
        std::string first;
        EXPECT_EQ(scaled_wrongly(before, scaled.download(), N, ldc, 3.0f, first), 0) << first;
        EXPECT_EQ(scaled_wrongly(before, zeroed.download(), N, ldc, 0.0f, first), 0) << first;
        const Accuracy a = gemm.check_output();
        EXPECT_TRUE(a.ok()) << a.verdict();
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
}

TEST(Dispatch, ABinaryMissingFromTheCacheIsCompiledAndCounted) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir;
    const std::string path = copy_of_test_db(db, dir);
    {
        TuningStore store(path);
        store.connection().exec("PRAGMA foreign_keys = OFF");
        store.connection().exec("DELETE FROM binaries WHERE cache_key = '" + db.tt_binary_key + "'");
    }
    const Dispatch dispatch(options(path));
    EXPECT_EQ(dispatch.info().kernels_compiled, 1);
    EXPECT_GT(dispatch.info().compile_ms, 0.0);
    GemmProblem p(spec_of(case_named("warptile TT"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    p.poison_output(gpu->stream.get());
    run(dispatch, p, gpu->stream.get());
    EXPECT_TRUE(p.check_output().ok());
    const std::string why = explain(dispatch, p);
    EXPECT_TRUE(contains(why, "compiled at create: warptile") && contains(why, "missing from the binary cache")) << why;
}

// An edited database pairs a winner without split-K with the split binary, and one with 3
// slices with the binary that does not split: each runs its own binary (both in the cache,
// so nothing is compiled) and gets C right.
TEST(Dispatch, AWinnerPairedWithAnotherInstantiationsBinaryRunsItsOwn) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir;
    const std::string path = copy_of_test_db(db, dir);
    const Family& warptile_family = find_family("warptile");
    {
        TuningStore store(path);
        for (auto [M, splits, binary_key] : {std::tuple{64, 1, db.nn_split_binary_key}, std::tuple{96, 3, db.nn_binary_key}}) {
            Winner w = sgemm::testing::winner(db.device_id, key_of(M, 128, 1536, false, false), 0.01, nullptr);
            w.kernel = kernel_ref(warptile_family, warptile(0, 0, splits));
            w.binary_key = binary_key;
            store.put_winner(w);
        }
    }
    const Dispatch dispatch(options(path));
    EXPECT_EQ(dispatch.info().kernels_compiled, 0);
    for (int M : {64, 96}) {
        SCOPED_TRACE("M=" + std::to_string(M));
        const Case c{"edited", M, 128, 1536, false, false, 0, "exact"};
        for (float beta : {0.0f, 0.5f}) {
            GemmProblem p(spec_of(c, 0.75f, beta), gpu->cublas, gpu->stream.get());
            p.poison_output(gpu->stream.get());
            run(dispatch, p, gpu->stream.get());
            const Accuracy a = p.check_output();
            EXPECT_TRUE(a.ok()) << a.verdict();
        }
    }
}

TEST(Dispatch, SixteenThreadsOnFourStreamsAtOnce) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    std::vector<Stream> streams(4);
    const char* names[] = {"decode split-K", "warptile split-K", "cuBLAS winner", "odd sizes near the decode winner",
                           "odd TN, no TN winner at align 4", "warptile TN"};
    // Each thread has its own outputs (each case twice), poisoned before every call of every
    // round and checked after each round (a check synchronizes the device, so the rounds run
    // the threads at once and are checked between them): a race that spoiled one round shows,
    // where a check after all rounds saw only the last. A gate starts each round's threads
    // together, so that their calls overlap (the first claims of the stream slots too).
    std::vector<std::vector<std::unique_ptr<GemmProblem>>> problems(16);
    for (int t = 0; t < 16; ++t)
        for (int copy = 0; copy < 2; ++copy)
            for (const char* name : names)
                problems[t].push_back(std::make_unique<GemmProblem>(spec_of(case_named(name), 1.0f, 0.0f),
                                                                    gpu->cublas, gpu->stream.get()));
    gpu->stream.synchronize();

    for (int round = 0; round < 5; ++round) {
        std::promise<void> open;
        const std::shared_future<void> gate = open.get_future().share();
        std::vector<std::future<std::string>> threads;
        try {  // the gate opened however this ends: a thread left waiting would hang its future
            for (int t = 0; t < 16; ++t)
                threads.push_back(std::async(std::launch::async, [&, t, gate]() -> std::string {
                    gate.wait();
                    try {
                        for (const auto& p : problems[t]) {
                            p->poison_output(streams[t % 4].get());
                            run(dispatch, *p, streams[t % 4].get());
                        }
                        return "";
                    } catch (const std::exception& e) {
                        return e.what();
                    }
                }));
        } catch (...) {
            open.set_value();
            throw;
        }
        open.set_value();
        for (auto& t : threads) EXPECT_EQ(t.get(), "") << "round " << round;
        for (int t = 0; t < 16; ++t)
            for (std::size_t i = 0; i < problems[t].size(); ++i) {
                const Accuracy a = problems[t][i]->check_output();
                EXPECT_TRUE(a.ok()) << "round " << round << ", thread " << t << ", " << names[i % std::size(names)]
                                    << ": " << a.verdict();
            }
    }
    EXPECT_EQ(dispatch.info().streams_used, 4);
}

// Many threads on one stream, with the two launches that pass data through the stream's
// workspace: the split-K sum pass after its slices, and the main kernel after the staging
// copy. Each call has its own output, so that any call whose kernels were split by another
// thread's launch (the second kernel then reading the other call's partials or copies) shows.
TEST(Dispatch, ThreadsSharingAStreamKeepEachCallsTwoKernelsTogether) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const Case staged{"staged", 300, 301, 299, false, false, 0, "exact"};
    store_staged_winner(dir.file("staged.db"), gpu->device, key_of(staged.M, staged.N, staged.K, false, false));
    const Dispatch summed_dispatch(options(test_db(gpu->device).path));
    const Dispatch staged_dispatch(options(dir.file("staged.db")));
    const Case& summed = case_named("warptile split-K, summed by a second kernel");
    constexpr int kThreads = 8, kCalls = 24;  // each thread's calls alternate the two kinds
    std::vector<std::vector<std::unique_ptr<GemmProblem>>> problems(kThreads);
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kCalls; ++i) {
            // Operands of their own: a second kernel that read another call's partials or
            // copies of the same operands would still give the right C.
            ProblemSpec spec = spec_of(i % 2 ? staged : summed, 1.0f, 0.0f);
            spec.seed += 1000 * t + i;
            problems[t].push_back(std::make_unique<GemmProblem>(spec, gpu->cublas, gpu->stream.get()));
            problems[t].back()->poison_output(gpu->stream.get());
        }
    gpu->stream.synchronize();
    const std::string summed_launch = explain(summed_dispatch, *problems[0][0]);
    const std::string staged_launch = explain(staged_dispatch, *problems[0][1]);
    ASSERT_TRUE(contains(summed_launch, "blocks that sums the")) << summed_launch;
    ASSERT_TRUE(contains(staged_launch, "launch    a staging kernel of")) << staged_launch;
    Stream shared;
    std::vector<std::future<std::string>> threads;
    for (auto& calls : problems)
        threads.push_back(std::async(std::launch::async, [&]() -> std::string {
            try {
                for (int i = 0; i < kCalls; ++i) run(i % 2 ? staged_dispatch : summed_dispatch, *calls[i], shared.get());
                return "";
            } catch (const std::exception& e) {
                return e.what();
            }
        }));
    for (auto& t : threads) EXPECT_EQ(t.get(), "");
    shared.synchronize();
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kCalls; ++i) {
            const Accuracy a = problems[t][i]->check_output();
            EXPECT_TRUE(a.ok()) << "thread " << t << ", call " << i << (i % 2 ? " (staged)" : " (summed)") << ": "
                                << a.verdict();
        }
}

TEST(Dispatch, CapturedCallsReplayAsAGraph) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    Stream stream;
    // Split-K decode, a cuBLAS winner, and shapes this handle has not met yet (a nearest
    // warptile that opts in to more shared memory, and a cuBLAS fallback): their first call
    // is inside the capture.
    std::vector<std::unique_ptr<GemmProblem>> problems;
    for (const char* name : {"decode split-K", "cuBLAS winner", "near the warptile NN winner",
                             "odd TN, no TN winner at align 4", "warptile split-K",
                             "warptile split-K, summed by a second kernel", "warptile split-K, added by atomics"}) {
        problems.push_back(std::make_unique<GemmProblem>(spec_of(case_named(name), 1.0f, 0.0f), gpu->cublas,
                                                         gpu->stream.get()));
        problems.back()->poison_output(gpu->stream.get());
    }
    gpu->stream.synchronize();

    // Each output is poisoned inside the graph before its call, and every replay is checked:
    // a replay that wrote nothing would otherwise show the one before it.
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal), cudaSuccess);
    std::string error;
    try {
        for (const auto& p : problems) {
            p->poison_output(stream.get());
            run(dispatch, *p, stream.get());
        }
    } catch (const std::exception& e) {
        error = e.what();
    }
    ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess);
    ASSERT_EQ(error, "");
    EXPECT_TRUE(std::isnan(problems[0]->download_output()[0])) << "captured work must not run before the replay";

    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int replay = 0; replay < 3; ++replay) {
        ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
        stream.synchronize();
        for (const auto& p : problems) {
            const Accuracy a = p->check_output();
            EXPECT_TRUE(a.ok()) << "replay " << replay << ", " << p->spec().M << "x" << p->spec().N << "x"
                                << p->spec().K << ": " << a.verdict();
        }
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
}

// A database that opens but whose rows cannot be read (kernels' parameter lists edited by
// hand) is one that cannot be read: DATABASE_ERROR, and no error with without_database, which
// said so and yet failed create. Every shape then falls back, here to the built-in kernels,
// compiled since nothing more is read from the file. Where only the built-in kernels' cached
// rows cannot be read (no winner names them), they are compiled, where create failed with a
// CUDA error.
TEST(Dispatch, RowsThatCannotBeReadAreADatabaseThatCannotBeRead) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir, other_dir;
    const std::string path = copy_of_test_db(db, dir), without_winners = copy_of_test_db(db, other_dir);
    const char* damage = "UPDATE kernels SET params = 'not,a,list,' || id WHERE family = 'warptile'";
    TuningStore(path).connection().exec(damage);
    {
        TuningStore store(without_winners);
        store.connection().exec("DELETE FROM winners");
        store.connection().exec(damage);
    }
    try {
        const Dispatch refused(options(path));
        ADD_FAILURE() << "created on rows that cannot be read";
    } catch (const DispatchError& e) {
        EXPECT_EQ(e.status(), SGEMM_DISPATCH_DATABASE_ERROR) << e.what();
        EXPECT_TRUE(contains(e.what(), "reading the winners") && contains(e.what(), "without_database")) << e.what();
    }
    sgemm_dispatch_options_t o = options(path, SGEMM_DISPATCH_FALLBACK_BUILTIN);
    o.without_database = 1;
    const Dispatch without(o);
    const Dispatch builtin(options(without_winners, SGEMM_DISPATCH_FALLBACK_BUILTIN));
    GemmProblem p(spec_of(case_named("warptile NN"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    for (const Dispatch* d : {&without, &builtin}) {
        EXPECT_EQ(d->info().winners, 0);
        EXPECT_EQ(d->info().kernels_compiled, 4) << "the four built-in kernels";
        p.poison_output(gpu->stream.get());
        run(*d, p, gpu->stream.get());
        const Accuracy a = p.check_output();
        EXPECT_TRUE(a.ok()) << a.verdict();
        EXPECT_TRUE(contains(explain(*d, p), "fallback policy: the built-in kernel, warptile")) << explain(*d, p);
    }
    EXPECT_TRUE(contains(explain(without, p), "reading the winners")) << explain(without, p);
    EXPECT_TRUE(contains(explain(builtin, p), "the binary cache could not be read")) << explain(builtin, p);
}

TEST(Dispatch, MissesAreCountedAndWrittenOffTheHotPath) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir;
    const std::string path = copy_of_test_db(db, dir);
    const Case& nearest = case_named("odd sizes near the decode winner");
    const Case& fallback = case_named("odd TN, no TN winner at align 4");
    GemmProblem near_p(spec_of(nearest, 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    GemmProblem fall_p(spec_of(fallback, 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    GemmProblem exact_p(spec_of(case_named("decode split-K"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    {
        const Dispatch dispatch(recording_misses(path, 50));
        for (int i = 0; i < 3; ++i) run(dispatch, near_p, gpu->stream.get());
        for (int i = 0; i < 2; ++i) run(dispatch, fall_p, gpu->stream.get());
        run(dispatch, exact_p, gpu->stream.get());
        // The background thread writes them, well before destroy.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (dispatch.info().misses_written < 5 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        EXPECT_EQ(dispatch.info().misses_written, 5);
        EXPECT_EQ(dispatch.info().misses_pending, 0);
    }
    {
        const Dispatch dispatch(recording_misses(path, kOnlyDestroyWrites));
        run(dispatch, near_p, gpu->stream.get());
        EXPECT_EQ(dispatch.info().misses_pending, 1);
    }
    TuningStore store(path, OpenMode::ReadOnly);
    const std::vector<Miss> misses = store.misses(db.device_id);
    ASSERT_EQ(misses.size(), 2u);
    EXPECT_EQ(misses[0].shape, key_of(nearest.M, nearest.N, nearest.K, nearest.ta, nearest.tb));
    EXPECT_EQ(misses[0].count, 4);
    EXPECT_EQ(misses[1].shape, key_of(fallback.M, fallback.N, fallback.K, fallback.ta, fallback.tb));
    EXPECT_EQ(misses[1].count, 2);
    std::set<std::string> recorders;
    for (const Miss& row : store.misses_by_recorder())
        if (row.device_id == db.device_id) recorders.insert(row.recorder);
    EXPECT_EQ(recorders.size(), 1u) << "both handles on the file count under one recorder: a row per shape";
}

// A miss counts once the call is served, or refused for want of a kernel (what a tune
// gives). A call refused for a stream's workspace, which an engine may retry, is none: each
// such retry used to count, inflating what `sgemm-tune --from-misses` reads.
TEST(Dispatch, ACallRefusedForAWorkspaceIsNoMiss) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const std::string path = copy_of_test_db(test_db(gpu->device), dir);
    // No winner of its key: cuBLAS serves it, through a stream's workspace.
    GemmProblem miss(spec_of(case_named("odd TN, no TN winner at align 4"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    gpu->stream.synchronize();
    const auto status_of = [&](const Dispatch& d, cudaStream_t stream) {
        try {
            run(d, miss, stream);
            return SGEMM_DISPATCH_SUCCESS;
        } catch (const DispatchError& e) {
            return e.status();
        }
    };
    sgemm_dispatch_options_t o = recording_misses(path, kOnlyDestroyWrites);
    o.max_streams = 1;
    {
        const Dispatch dispatch(o);
        Stream first, second;
        EXPECT_EQ(status_of(dispatch, first.get()), SGEMM_DISPATCH_SUCCESS);
        for (int retry = 0; retry < 3; ++retry)
            EXPECT_EQ(status_of(dispatch, second.get()), SGEMM_DISPATCH_TOO_MANY_STREAMS);
        EXPECT_EQ(dispatch.info().misses_pending, 1);
        first.synchronize();
    }
    o.fallback = SGEMM_DISPATCH_FALLBACK_ERROR;
    const Dispatch strict(o);
    EXPECT_EQ(status_of(strict, gpu->stream.get()), SGEMM_DISPATCH_NO_KERNEL);
    EXPECT_EQ(strict.info().misses_pending, 1) << "a shape with no kernel is what a tune gives one";
}

TEST(Dispatch, DestroySaysWhenTheLastMissesCannotBeWritten) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir;
    const std::string path = copy_of_test_db(db, dir);
    GemmProblem p(spec_of(case_named("odd TN, no TN winner at align 4"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    const sgemm_dispatch_options_t o = recording_misses(path, kOnlyDestroyWrites);
    sgemm_dispatch_t handle = nullptr;
    ASSERT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();
    const SgemmArgs a = p.args();
    ASSERT_EQ(sgemm_dispatch_gemm(handle, p.spec().trans_a ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N,
                                  p.spec().trans_b ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N, a.M, a.N, a.K, 1.0f,
                                  a.A, a.lda, a.B, a.ldb, 0.0f, a.C, a.ldc, gpu->stream.get()),
              SGEMM_DISPATCH_SUCCESS)
        << sgemm_dispatch_last_error();
    // The database becomes a folder: the final write of the miss fails, and destroy says so.
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    EXPECT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_NE(std::string(sgemm_dispatch_last_error()).find("writing misses to " + path), std::string::npos)
        << sgemm_dispatch_last_error();
    EXPECT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_INVALID_HANDLE);  // destroyed all the same
}

// The C++ wrapper: reset() destroys now and returns what the destructor cannot (here the
// failed write of a miss), release() hands the handle over undestroyed.
TEST(Dispatch, TheCppWrapperReportsDestroysStatusAndCanGiveUpItsHandle) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    const std::string path = copy_of_test_db(test_db(gpu->device), dir);
    GemmProblem p(spec_of(case_named("odd TN, no TN winner at align 4"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    Dispatch recording(recording_misses(path, kOnlyDestroyWrites));
    run(recording, p, gpu->stream.get());
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);  // the final write of the miss fails
    EXPECT_EQ(recording.reset(), SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_EQ(recording.get(), nullptr);
    EXPECT_EQ(recording.reset(), SGEMM_DISPATCH_SUCCESS) << "an empty object";

    Dispatch owner(options(test_db(gpu->device).path));
    const sgemm_dispatch_t handle = owner.release();
    EXPECT_EQ(owner.get(), nullptr);
    sgemm_dispatch_info_t info;
    EXPECT_EQ(sgemm_dispatch_get_info(handle, &info), SGEMM_DISPATCH_SUCCESS) << "released, not destroyed";
    EXPECT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_SUCCESS);
}

TEST(Dispatch, BadArgumentsTouchNothing) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    GemmProblem p(spec_of(case_named("warptile NN"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    p.poison_output(gpu->stream.get());
    const SgemmArgs a = p.args();
    const auto status_of = [&](int M, int lda, const float* A, float* C) {
        return sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, M, 384, 256, 1.0f, A, lda,
                                   a.B, a.ldb, 0.0f, C, a.ldc, gpu->stream.get());
    };
    EXPECT_EQ(status_of(200, 255, a.A, a.C), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_EQ(status_of(-1, 256, a.A, a.C), SGEMM_DISPATCH_INVALID_SIZE);
    // An empty product succeeds and touches nothing, as in cuBLAS (C stays NaN below); as in
    // cuBLAS, its leading dimensions must still be right.
    EXPECT_EQ(status_of(0, 256, a.A, a.C), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(status_of(0, 255, a.A, a.C), SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
    EXPECT_EQ(status_of(200, 256, nullptr, a.C), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_EQ(status_of(200, 256, a.A + 0, reinterpret_cast<float*>(reinterpret_cast<char*>(a.C) + 2)),
              SGEMM_DISPATCH_MISALIGNED);
    for (float x : p.download_output()) ASSERT_TRUE(std::isnan(x)) << "a refused call wrote C";
}

// cuBLAS is the fallback, so dispatch must accept the leading dimensions cuBLAS accepts and
// refuse the rest, empty products (M or N of 0) and K of 0 included: each one just long
// enough and one short, in every layout, against cublasSgemm's own status.
TEST(Dispatch, LeadingDimensionsAreJudgedAsCublasJudgesThem) {
    SGEMM_REQUIRE_GPU(gpu);
    const Dispatch dispatch(options(test_db(gpu->device).path));
    DeviceBuffer<float> a(64), b(64), c(64);
    ASSERT_EQ(cublasSetStream(gpu->cublas.get(), gpu->stream.get()), CUBLAS_STATUS_SUCCESS);
    int compared = 0;
    for (const auto& [M, N, K] : {std::tuple{0, 5, 3}, std::tuple{4, 0, 3}, std::tuple{4, 5, 3}, std::tuple{4, 5, 0}})
        for (const bool ta : {false, true})
            for (const bool tb : {false, true})
                for (int which = 0; which < 3; ++which)
                    for (const int short_by : {0, 1}) {
                        // The least each may be (its stored row length, and 1), one of them less.
                        int ld[3] = {std::max(1, ta ? M : K), std::max(1, tb ? K : N), std::max(1, N)};
                        ld[which] -= short_by;
                        const SgemmArgs args{M, N, K, 1.0f, 0.0f, a.data(), ld[0], b.data(), ld[1], c.data(), ld[2],
                                             nullptr};
                        const bool cublas_took =
                            gpu->cublas.sgemm_on_bound_stream(args, ta, tb) == CUBLAS_STATUS_SUCCESS;
                        const sgemm_dispatch_status_t status = sgemm_dispatch_gemm(
                            dispatch.get(), ta ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N,
                            tb ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N, M, N, K, 1.0f, args.A, args.lda, args.B,
                            args.ldb, 0.0f, args.C, args.ldc, gpu->stream.get());
                        EXPECT_EQ(status == SGEMM_DISPATCH_SUCCESS, cublas_took)
                            << M << "x" << N << "x" << K << (ta ? " T" : " N") << (tb ? "T" : "N") << " lda=" << ld[0]
                            << " ldb=" << ld[1] << " ldc=" << ld[2] << ": " << sgemm_dispatch_last_error();
                        if (!cublas_took) {
                            EXPECT_EQ(status, SGEMM_DISPATCH_INVALID_LEADING_DIMENSION);
                        }
                        ++compared;
                    }
    EXPECT_EQ(compared, 96);
    ASSERT_EQ(cudaStreamSynchronize(gpu->stream.get()), cudaSuccess);
}

TEST(Dispatch, MovingOneDispatchOntoAnotherDestroysTheHandleItHeld) {
    SGEMM_REQUIRE_GPU(gpu);
    const sgemm_dispatch_options_t o = options(test_db(gpu->device).path);
    Dispatch kept(o), moved(o);
    const sgemm_dispatch_t old_handle = kept.get(), new_handle = moved.get();
    kept = std::move(moved);
    EXPECT_EQ(kept.get(), new_handle);
    EXPECT_EQ(moved.get(), nullptr);
    sgemm_dispatch_info_t info;
    EXPECT_EQ(sgemm_dispatch_get_info(old_handle, &info), SGEMM_DISPATCH_INVALID_HANDLE) << "the old handle lives on";
    EXPECT_EQ(sgemm_dispatch_get_info(kept.get(), &info), SGEMM_DISPATCH_SUCCESS);
}

TEST(Dispatch, ADestroyedHandleIsRefused) {
    SGEMM_REQUIRE_GPU(gpu);
    const std::string path = test_db(gpu->device).path;
    const sgemm_dispatch_options_t o = options(path);
    sgemm_dispatch_t handle = nullptr;
    ASSERT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();
    ASSERT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_SUCCESS);
    float* x = nullptr;
    ASSERT_EQ(cudaMalloc(&x, 64), cudaSuccess);
    EXPECT_EQ(sgemm_dispatch_gemm(handle, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 1, 1, 1, 1.0f, x, 1, x, 1, 0.0f, x,
                                  1, nullptr),
              SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_TRUE(contains(sgemm_dispatch_last_error(), "destroyed")) << sgemm_dispatch_last_error();
    EXPECT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_INVALID_HANDLE) << "destroyed twice";
    cudaFree(x);
}

// A child made by fork() inherits a copy of the handle, but cannot use CUDA, and the thread
// that writes misses is the parent's: its calls are refused with the reason, and its destroy
// frees and writes nothing (it used to write the parent's pending misses once more). The
// parent's handle goes on, and its misses are counted once.
TEST(Dispatch, AForkedChildNeitherUsesNorFreesItsParentsHandle) {
    SGEMM_REQUIRE_GPU(gpu);
    const TestDb& db = test_db(gpu->device);
    TempDir dir;
    const std::string path = copy_of_test_db(db, dir);
    const Case& fallback = case_named("odd TN, no TN winner at align 4");
    GemmProblem p(spec_of(fallback, 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    const sgemm_dispatch_options_t o = recording_misses(path, kOnlyDestroyWrites);
    sgemm_dispatch_t handle = nullptr;
    ASSERT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();
    const SgemmArgs a = p.args();
    const ProblemSpec& s = p.spec();
    const auto call = [&] {
        return sgemm_dispatch_gemm(handle, s.trans_a ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N,
                                   s.trans_b ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N, s.M, s.N, s.K, s.alpha, a.A,
                                   a.lda, a.B, a.ldb, s.beta, a.C, a.ldc, gpu->stream.get());
    };
    ASSERT_EQ(call(), SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();  // one miss pending

    const int child = in_child([&] {
        alarm(60);  // a call stuck in CUDA ends the child, not the test
        if (call() != SGEMM_DISPATCH_INVALID_HANDLE || !contains(sgemm_dispatch_last_error(), "forked"))
            throw Error(std::string("gemm in the child: ") + sgemm_dispatch_last_error());
        sgemm_dispatch_info_t info;
        if (sgemm_dispatch_get_info(handle, &info) != SGEMM_DISPATCH_INVALID_HANDLE)
            throw Error("get_info in the child was not refused");
        if (sgemm_dispatch_destroy(handle) != SGEMM_DISPATCH_SUCCESS)
            throw Error(std::string("destroy in the child: ") + sgemm_dispatch_last_error());
        if (sgemm_dispatch_destroy(handle) != SGEMM_DISPATCH_INVALID_HANDLE || !contains(sgemm_dispatch_last_error(), "destroyed"))
            throw Error("a second destroy in the child was not refused");
    });
    EXPECT_EQ(child, 0) << "the child's checks (its stderr says which failed)";

    p.poison_output(gpu->stream.get());
    EXPECT_EQ(call(), SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();
    ASSERT_EQ(cudaStreamSynchronize(gpu->stream.get()), cudaSuccess);
    EXPECT_TRUE(p.check_output().ok()) << "the parent's handle still computes";
    EXPECT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();
    TuningStore store(path, OpenMode::ReadOnly);
    const std::vector<Miss> misses = store.misses(db.device_id);
    ASSERT_EQ(misses.size(), 1u);
    EXPECT_EQ(misses[0].count, 2) << "the parent's two calls, once";
}

// A thread whose current device is another GPU: gemm and release_stream refuse it with
// WRONG_DEVICE (there cudaStreamPerThread names another stream, so a release would give back
// nothing), and the stream is released once the handle's device is current again. A stream
// of the other GPU is refused as well, where the call needs a workspace.
TEST(Dispatch, CallsFromAnotherDeviceAreRefused) {
    SGEMM_REQUIRE_GPU(gpu);
    int devices = 0;
    ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
    if (devices < 2) GTEST_SKIP() << "needs a second GPU to be the calling thread's current device";
    sgemm_dispatch_options_t o = options(test_db(gpu->device).path);
    o.device = gpu->device.ordinal;
    o.max_streams = 1;
    const Dispatch dispatch(o);
    GemmProblem cublas(spec_of(case_named("cuBLAS winner"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    gpu->stream.synchronize();
    run(dispatch, cublas, cudaStreamPerThread);
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
    ASSERT_EQ(dispatch.info().streams_used, 1);

    ASSERT_EQ(cudaSetDevice(gpu->device.ordinal == 0 ? 1 : 0), cudaSuccess);
    const SgemmArgs a = cublas.args();
    const ProblemSpec& s = cublas.spec();
    const sgemm_dispatch_status_t gemm_status =
        sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, s.M, s.N, s.K, 1.0f, a.A, a.lda,
                            a.B, a.ldb, 0.0f, a.C, a.ldc, cudaStreamPerThread);
    const sgemm_dispatch_status_t release_status = sgemm_dispatch_release_stream(dispatch.get(), cudaStreamPerThread);
    const std::string why = sgemm_dispatch_last_error();
    ASSERT_EQ(cudaSetDevice(gpu->device.ordinal), cudaSuccess);
    EXPECT_EQ(gemm_status, SGEMM_DISPATCH_WRONG_DEVICE);
    EXPECT_EQ(release_status, SGEMM_DISPATCH_WRONG_DEVICE);
    EXPECT_TRUE(contains(why, "cudaSetDevice")) << why;
    EXPECT_EQ(dispatch.info().streams_used, 1) << "a refused release gives back nothing";
    EXPECT_EQ(sgemm_dispatch_release_stream(dispatch.get(), cudaStreamPerThread), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(dispatch.info().streams_used, 0);

    // A stream of the other GPU, called with the handle's device current: refused too, before
    // it takes a workspace.
    ASSERT_EQ(cudaSetDevice(gpu->device.ordinal == 0 ? 1 : 0), cudaSuccess);
    const Stream there;
    ASSERT_EQ(cudaSetDevice(gpu->device.ordinal), cudaSuccess);
    EXPECT_EQ(sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, s.M, s.N, s.K, 1.0f, a.A,
                                  a.lda, a.B, a.ldb, 0.0f, a.C, a.ldc, there.get()),
              SGEMM_DISPATCH_WRONG_DEVICE);
    EXPECT_TRUE(contains(sgemm_dispatch_last_error(), "another device or CUDA context")) << sgemm_dispatch_last_error();
    EXPECT_EQ(dispatch.info().streams_used, 0) << "a stream of the other GPU took a workspace";
}

// An engine that splits a model over GPUs keeps a handle per GPU, and the GPUs, of one model,
// share one database's rows (their fingerprints match). Each handle loads its kernels and
// makes its workspaces and cuBLAS handles on its own device, and calls on both GPUs at once,
// from a thread each, match cuBLAS there: exact winners of each kind (split-K with its
// workspace, a sum pass, atomics, cuBLAS) and a fallback. create and destroy make the
// handle's device current; a create that fails on the other GPU after making it current
// (rows that cannot be read) gives the caller back its own.
TEST(Dispatch, AHandlePerGpuComputesOnItsOwnDevice) {
    SGEMM_REQUIRE_GPU(gpu);
    int devices = 0;
    ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
    if (devices < 2) GTEST_SKIP() << "needs a second GPU";
    const int home = gpu->device.ordinal, other = home == 0 ? 1 : 0;
    ASSERT_EQ(cudaSetDevice(home), cudaSuccess);
    const TestDb& db = test_db(gpu->device);
    const auto current_device = [] {
        int d = -1;
        return cudaGetDevice(&d) == cudaSuccess ? d : -1;
    };

    {
        TempDir dir;
        const std::string damaged = copy_of_test_db(db, dir);
        TuningStore(damaged).connection().exec("UPDATE kernels SET params = 'not,a,list,' || id WHERE family = 'warptile'");
        sgemm_dispatch_options_t o = options(damaged);
        o.device = other;
        sgemm_dispatch_t handle = nullptr;
        EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_DATABASE_ERROR) << sgemm_dispatch_last_error();
        EXPECT_TRUE(contains(sgemm_dispatch_last_error(), "reading the winners")) << sgemm_dispatch_last_error();
        EXPECT_EQ(current_device(), home) << "a failed create on the other GPU kept it current";
    }

    sgemm_dispatch_options_t there_options = options(db.path);
    there_options.device = other;
    std::optional<Dispatch> there(std::in_place, there_options);
    EXPECT_EQ(current_device(), other) << "create makes the handle's device current";
    sgemm_dispatch_options_t here_options = options(db.path);
    here_options.device = home;
    const Dispatch here(here_options);
    EXPECT_EQ(current_device(), home);
    for (const Dispatch* d : {&here, static_cast<const Dispatch*>(&*there)}) {
        EXPECT_EQ(d->info().winners, 9);
        EXPECT_EQ(d->info().kernels_loaded, 8);
        EXPECT_EQ(d->info().kernels_compiled, 0) << "the other GPU runs the binaries cached for this one";
    }

    const char* names[] = {"decode split-K",
                           "warptile NN",
                           "warptile TT",
                           "warptile split-K, summed by a second kernel",
                           "warptile split-K, added by atomics",
                           "cuBLAS winner",
                           "odd TN, no TN winner at align 4"};
    // Each GPU's operands, reference (cuBLAS on that GPU), stream and calls, in a thread of
    // its own whose current device is that GPU, as an engine's would be.
    const auto compute_on = [&](int device, const Dispatch& dispatch) -> std::string {
        try {
            SGEMM_CUDA_CHECK(cudaSetDevice(device));
            const Stream stream;
            const CublasHandle cublas;
            std::string failures;
            for (const char* name : names) {
                GemmProblem p(spec_of(case_named(name), 0.75f, 0.5f), cublas, stream.get());
                for (int round = 0; round < 3; ++round) {
                    p.poison_output(stream.get());
                    run(dispatch, p, stream.get());
                    stream.synchronize();
                    const Accuracy a = p.check_output();
                    if (!a.ok()) failures += std::string(name) + ", round " + std::to_string(round) + ": " + a.verdict() + "; ";
                }
            }
            if (dispatch.info().streams_used != 1) failures += "the calls did not take one stream's workspace; ";
            return failures;
        } catch (const std::exception& e) {
            return e.what();
        }
    };
    auto on_home = std::async(std::launch::async, compute_on, home, std::cref(here));
    auto on_other = std::async(std::launch::async, compute_on, other, std::cref(*there));
    EXPECT_EQ(on_home.get(), "") << "GPU " << home;
    EXPECT_EQ(on_other.get(), "") << "GPU " << other;

    ASSERT_EQ(current_device(), home);
    there.reset();
    EXPECT_EQ(current_device(), other) << "destroy makes the handle's device current";
    ASSERT_EQ(cudaSetDevice(home), cudaSuccess);
}

// A nearby call whose winner would have to be re-split to fewer slices to fit the workspace,
// where fewer slices would need more shared memory than the GPU has (decode holds its block's
// slice of A there): the winner is passed over, and cuBLAS computes the call. Before, the
// re-split was made, and its launch failed (Catalog.AReSplitThatWouldPassTheSharedMemoryLimitIsNotMade).
TEST(Dispatch, ACallWhoseReSplitWouldPassTheSharedMemoryLimitRunsTheFallback) {
    SGEMM_REQUIRE_GPU(gpu);
    const Arch arch{gpu->device.sm()};
    // K such that 32 rows of A's slice in 8 slices nearly fill this GPU's shared memory, and in
    // 4 (what the workspace holds at 4 times the winner's N) need twice as much.
    const int K = 8 * (arch_limits(arch).max_shared_per_block / (4 * 32) / 4 * 4 - 16);
    const Family& decode = find_family("decode");
    const ParamValues eight_slices = {32, 128, 1, 1, 1, 0, 8, 0, 0};  // MT BN KW UNROLL EF TB SPLITS RING SUM_PASS
    ASSERT_EQ(decode.unsupported_shape_reason(eight_slices, 32, 4096, K, arch), "");
    TempDir dir;
    const std::string path = dir.file("tuning.db");
    {
        TuningStore store(path);
        const std::string id = store.add_device(fingerprint_of(gpu->device));
        const Binary b = to_binary(compile_kernel(decode, eight_slices, arch), kernel_ref(decode, eight_slices));
        store.put_binary(b);
        store.put_winner(sgemm::testing::winner(id, key_of(32, 1024, K, false, false), 0.01, &b));
    }
    const Dispatch dispatch(options(path));
    ASSERT_EQ(dispatch.info().winners, 1);
    const Case wider{"4 times the winner's N", 32, 4096, K, false, false, 0, "fallback"};
    GemmProblem p(spec_of(wider, 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    const sgemm_dispatch_choice_t choice = dispatch.query(false, false, 32, 4096, K, nullptr, K, nullptr, 4096,
                                                          nullptr, 4096);
    EXPECT_EQ(choice.decision, SGEMM_DISPATCH_DECISION_FALLBACK) << explain(dispatch, p);
    EXPECT_EQ(choice.route, SGEMM_DISPATCH_ROUTE_CUBLAS) << explain(dispatch, p);
    p.poison_output(gpu->stream.get());
    run(dispatch, p, gpu->stream.get());
    const Accuracy a = p.check_output();
    EXPECT_TRUE(a.ok()) << a.verdict();
}

TEST(Dispatch, StreamsBeyondTheWorkspacesAreRefusedOnlyWhereTheyNeedOne) {
    SGEMM_REQUIRE_GPU(gpu);
    sgemm_dispatch_options_t o = options(test_db(gpu->device).path);
    o.max_streams = 1;
    const Dispatch dispatch(o);
    Stream first, second;
    GemmProblem split(spec_of(case_named("decode split-K"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    GemmProblem plain(spec_of(case_named("warptile NN"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    GemmProblem cublas(spec_of(case_named("cuBLAS winner"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    split.poison_output(gpu->stream.get());
    plain.poison_output(gpu->stream.get());
    gpu->stream.synchronize();
    run(dispatch, split, first.get());
    std::string why;
    const auto status_on_second = [&](const GemmProblem& p) {
        try {
            run(dispatch, p, second.get());
            return SGEMM_DISPATCH_SUCCESS;
        } catch (const DispatchError& e) {
            why = e.what();
            return e.status();
        }
    };
    EXPECT_EQ(status_on_second(split), SGEMM_DISPATCH_TOO_MANY_STREAMS);
    // The usual cause, streams never released, is named with the way out.
    EXPECT_TRUE(contains(why, "a stream keeps its workspace until sgemm_dispatch_release_stream")) << why;
    EXPECT_EQ(status_on_second(cublas), SGEMM_DISPATCH_TOO_MANY_STREAMS);
    EXPECT_EQ(status_on_second(plain), SGEMM_DISPATCH_SUCCESS) << "no workspace, no cuBLAS: any stream";
    EXPECT_TRUE(split.check_output().ok());
    EXPECT_TRUE(plain.check_output().ok());

    // Once the first stream gives its workspace back, the second takes it, cuBLAS included
    // (bound to the second stream now), and both kinds of call are right there.
    first.synchronize();
    dispatch.release_stream(first.get());
    EXPECT_EQ(dispatch.info().streams_used, 0);
    dispatch.release_stream(first.get());  // holds none now: nothing to do
    split.poison_output(gpu->stream.get());
    cublas.poison_output(gpu->stream.get());
    gpu->stream.synchronize();
    EXPECT_EQ(status_on_second(cublas), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(status_on_second(split), SGEMM_DISPATCH_SUCCESS);
    second.synchronize();
    EXPECT_TRUE(cublas.check_output().ok());
    EXPECT_TRUE(split.check_output().ok());
    EXPECT_EQ(status_on_second(plain), SGEMM_DISPATCH_SUCCESS);
    EXPECT_EQ(dispatch.info().streams_used, 1);
}

// The driver's (libcuda's) function `name`, which the project does not link (cudart loads
// it), or nullptr.
template <class Function>
Function driver_function(const char* name) {
    void* const cuda = dlopen("libcuda.so.1", RTLD_NOW);
    return cuda ? reinterpret_cast<Function>(dlsym(cuda, name)) : nullptr;
}

// Whether device 0's primary CUDA context is active, asked of the driver without starting
// one; a sentence when it cannot say.
std::string device_0_context() {
    const auto init = driver_function<CUresult (*)(unsigned)>("cuInit");
    const auto device_get = driver_function<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
    const auto state = driver_function<CUresult (*)(CUdevice, unsigned*, int*)>("cuDevicePrimaryCtxGetState");
    CUdevice device = -1;
    int active = -1;
    unsigned flags = 0;
    if (!init || !device_get || !state || init(0) != CUDA_SUCCESS || device_get(&device, 0) != CUDA_SUCCESS ||
        state(device, &flags, &active) != CUDA_SUCCESS)
        return "the driver did not say";
    return active ? "active" : "inactive";
}

// A create that fails after making its device current gives the calling thread back the
// context it found. It used to give back the device with cudaSetDevice, which cannot: on a
// thread with no context, cudaGetDevice says device 0, and cudaSetDevice(0) then starts
// device 0's context (hundreds of MB) in a process that may only use another GPU, or, here,
// leaves the handle's device's context current on a thread that had none; and it makes the
// primary context current in place of one the caller made with the driver API. Each case on a
// thread of its own that has not used CUDA before.
TEST(Dispatch, AFailedCreateGivesTheThreadBackTheContextItFound) {
    SGEMM_REQUIRE_GPU(gpu);
    const auto get_current = driver_function<CUresult (*)(CUcontext*)>("cuCtxGetCurrent");
    const auto set_current = driver_function<CUresult (*)(CUcontext)>("cuCtxSetCurrent");
    const auto create_context = driver_function<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2");
    const auto destroy_context = driver_function<CUresult (*)(CUcontext)>("cuCtxDestroy_v2");
    ASSERT_TRUE(get_current && set_current && create_context && destroy_context)
        << "libcuda lacks cuCtxGetCurrent, cuCtxSetCurrent, cuCtxCreate_v2 or cuCtxDestroy_v2";
    // (A thread that had no context may still find the runtime choosing the handle's device at
    // its next call: dispatch.h says so; with one GPU that device is this one anyway.)
    TempDir dir;
    const std::string damaged = copy_of_test_db(test_db(gpu->device), dir);
    TuningStore(damaged).connection().exec("UPDATE kernels SET params = 'not,a,list,' || id WHERE family = 'warptile'");
    sgemm_dispatch_options_t o = options(damaged);
    o.device = gpu->device.ordinal;
    // What a failed create left current on a new thread that first made `own` current (with
    // nullptr: nothing); "" when it was `own`, else what it was.
    const auto left_current_after_failing = [&](CUcontext own) {
        std::string what;
        std::thread([&] {
            if (own && set_current(own) != CUDA_SUCCESS) {
                what = "cuCtxSetCurrent failed";
                return;
            }
            sgemm_dispatch_t handle = nullptr;
            const sgemm_dispatch_status_t status = sgemm_dispatch_create(&handle, &o);
            CUcontext now = nullptr;
            // Reading the winners comes after the device is made current: a failure before it
            // (the file not opened) would leave nothing to give back.
            if (status != SGEMM_DISPATCH_DATABASE_ERROR || !contains(sgemm_dispatch_last_error(), "reading the winners"))
                what = std::string("create gave ") + sgemm_dispatch_status_string(status) + ": " +
                       sgemm_dispatch_last_error();
            else if (get_current(&now) != CUDA_SUCCESS)
                what = "cuCtxGetCurrent failed";
            else if (now != own)
                what = now ? "a context the thread did not have" : "no context";
            if (now) set_current(nullptr);
        }).join();
        return what;
    };
    EXPECT_EQ(left_current_after_failing(nullptr), "") << "on a thread with no context";

    // cuCtxCreate pushes the new context on this thread's stack: popped at once, so that this
    // thread's own is current again, and destroyed however the test ends.
    const auto device_get = driver_function<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
    const auto pop_current = driver_function<CUresult (*)(CUcontext*)>("cuCtxPopCurrent_v2");
    CUdevice device = -1;
    CUcontext own = nullptr, popped = nullptr;
    ASSERT_TRUE(device_get && pop_current && device_get(&device, gpu->device.ordinal) == CUDA_SUCCESS);
    ASSERT_EQ(create_context(&own, 0, device), CUDA_SUCCESS);
    const std::unique_ptr<CUctx_st, CUresult (*)(CUcontext)> destroyed_at_the_end(own, destroy_context);
    ASSERT_EQ(pop_current(&popped), CUDA_SUCCESS);
    ASSERT_EQ(popped, own);
    EXPECT_EQ(left_current_after_failing(own), "") << "on a thread with a context of its own";
}

// Streams of another CUDA context on the handle's own device, as a library of the engine's
// might make with the driver API: the handle's workspaces and cuBLAS handles belong to the
// device's primary context, out of such a stream's reach. A call that needs them is refused
// with WRONG_DEVICE and takes no workspace (it used to take one for that stream and keep it
// until release_stream), so the handle's one workspace is still there for the legacy default
// stream. That stream, one handle in every context, is refused too while the other context is
// current, though it holds the workspace by then.
TEST(Dispatch, AStreamOfAnotherContextTakesNoWorkspace) {
    SGEMM_REQUIRE_GPU(gpu);
    const auto device_get = driver_function<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
    const auto create_context = driver_function<CUresult (*)(CUcontext*, unsigned, CUdevice)>("cuCtxCreate_v2");
    const auto push_current = driver_function<CUresult (*)(CUcontext)>("cuCtxPushCurrent_v2");
    const auto pop_current = driver_function<CUresult (*)(CUcontext*)>("cuCtxPopCurrent_v2");
    const auto destroy_context = driver_function<CUresult (*)(CUcontext)>("cuCtxDestroy_v2");
    const auto create_stream = driver_function<CUresult (*)(CUstream*, unsigned)>("cuStreamCreate");
    const auto destroy_stream = driver_function<CUresult (*)(CUstream)>("cuStreamDestroy_v2");
    ASSERT_TRUE(device_get && create_context && push_current && pop_current && destroy_context && create_stream &&
                destroy_stream)
        << "libcuda lacks a function this test makes a context and a stream with";
    sgemm_dispatch_options_t o = options(test_db(gpu->device).path);
    o.device = gpu->device.ordinal;
    o.max_streams = 1;
    const Dispatch dispatch(o);

    // cuCtxCreate pushes the new context: its stream is made there, and the context popped at
    // once, so that the primary one is current again. Both are destroyed however the test
    // ends, the stream first.
    CUdevice device = -1;
    CUcontext other = nullptr, popped = nullptr;
    CUstream foreign = nullptr;
    ASSERT_EQ(device_get(&device, gpu->device.ordinal), CUDA_SUCCESS);
    ASSERT_EQ(create_context(&other, 0, device), CUDA_SUCCESS);
    const std::unique_ptr<CUctx_st, CUresult (*)(CUcontext)> context_destroyed(other, destroy_context);
    const CUresult stream_made = create_stream(&foreign, CU_STREAM_NON_BLOCKING);
    ASSERT_EQ(pop_current(&popped), CUDA_SUCCESS);
    ASSERT_EQ(popped, other);
    ASSERT_EQ(stream_made, CUDA_SUCCESS);
    const std::unique_ptr<CUstream_st, CUresult (*)(CUstream)> stream_destroyed(foreign, destroy_stream);

    GemmProblem split(spec_of(case_named("decode split-K"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    GemmProblem cublas(spec_of(case_named("cuBLAS winner"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
    split.poison_output(gpu->stream.get());
    cublas.poison_output(gpu->stream.get());
    gpu->stream.synchronize();
    std::string why;
    const auto status_on = [&](const GemmProblem& p, cudaStream_t stream) {
        try {
            run(dispatch, p, stream);
            return SGEMM_DISPATCH_SUCCESS;
        } catch (const DispatchError& e) {
            why = e.what();
            return e.status();
        }
    };
    for (const GemmProblem* p : {&split, &cublas}) {
        EXPECT_EQ(status_on(*p, foreign), SGEMM_DISPATCH_WRONG_DEVICE) << why;
        EXPECT_TRUE(contains(why, "give a stream that the runtime API made on device")) << why;
    }
    EXPECT_EQ(dispatch.info().streams_used, 0) << "a refused stream took a workspace";

    EXPECT_EQ(status_on(split, cudaStreamLegacy), SGEMM_DISPATCH_SUCCESS) << why;
    EXPECT_EQ(status_on(cublas, cudaStreamLegacy), SGEMM_DISPATCH_SUCCESS) << why;
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
    EXPECT_TRUE(split.check_output().ok());
    EXPECT_TRUE(cublas.check_output().ok());
    EXPECT_EQ(dispatch.info().streams_used, 1);

    ASSERT_EQ(push_current(other), CUDA_SUCCESS);
    const sgemm_dispatch_status_t under_the_other = status_on(split, cudaStreamLegacy);
    ASSERT_EQ(pop_current(&popped), CUDA_SUCCESS);
    EXPECT_EQ(under_the_other, SGEMM_DISPATCH_WRONG_DEVICE)
        << "the legacy stream of the other context used the workspace: " << why;
    // No one made the default stream: the message points at the current context instead.
    EXPECT_TRUE(contains(why, "the default stream is the calling thread's current CUDA context's")) << why;
}

namespace {

// Memory allocated and freed at once: the device no longer maps it, so a kernel that writes
// there faults. nullptr where the allocation or the free failed.
float* freed_device_memory() {
    float* freed = nullptr;
    if (cudaMalloc(&freed, std::size_t{64} << 20) != cudaSuccess || cudaFree(freed) != cudaSuccess) return nullptr;
    return freed;
}

// Ends a death test's process with `outcome` on stderr, which EXPECT_EXIT's pattern reads.
[[noreturn]] void exit_telling(const std::string& outcome) {
    std::fprintf(stderr, "%s\n", outcome.c_str());
    std::fflush(stderr);
    std::_Exit(0);
}

// Faults the context: cuBLAS writes C (1x1, of A and B in `a`) into memory freed just now.
// "" once the fault came, else what went otherwise.
std::string fault_the_context(sgemm::testing::GpuContext& gpu, const SgemmArgs& a) {
    float* const freed = freed_device_memory();
    if (!freed) return "cudaMalloc or cudaFree failed";
    const float one = 1.0f, zero = 0.0f;
    cublasSetStream(gpu.cublas.get(), gpu.stream.get());
    cublasSgemm(gpu.cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a.A, 1, a.B, 1, &zero, freed, 1);
    if (cudaStreamSynchronize(gpu.stream.get()) == cudaSuccess) return "cuBLAS did not fault";
    return "";
}

}  // namespace

// A create that fails before it uses the device (here: no database) starts no CUDA context.
// Giving a failed create's caller back its device used to call cudaSetDevice on it
// whatever happened, which starts that device's context: hundreds of MB of GPU memory for a
// process that had never touched the GPU. The threadsafe death test runs this test again in
// a process of its own, where nothing has started a context yet; the parent only checks
// that a GPU is there, which starts none either.
TEST(DispatchDeathTest, ACreateThatFailsBeforeTheDeviceStartsNoContext) {
    int devices = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
        const std::string why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device is visible";
        if (const std::string unused = sgemm::testing::installed_gpu_unused(why); !unused.empty()) GTEST_FAIL() << unused;
        GTEST_SKIP() << "GPU test skipped: " << why;
    }
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const TempDir dir;
            const std::string missing = dir.file("missing.db");
            sgemm_dispatch_options_t o = options(missing);
            sgemm_dispatch_t handle = nullptr;
            const sgemm_dispatch_status_t status = sgemm_dispatch_create(&handle, &o);
            std::fprintf(stderr, "status %d, device 0's context %s\n", static_cast<int>(status),
                         device_0_context().c_str());
            std::fflush(stderr);
            std::_Exit(0);
        },
        ::testing::ExitedWithCode(0),
        "status " + std::to_string(static_cast<int>(SGEMM_DISPATCH_DATABASE_ERROR)) + ", device 0's context inactive");
}

// A create in a process whose CUDA context a fault has ended says so (CUDA_ERROR, with the
// runtime's words), not that there is no device: the device is there, its context is lost.
// (On the H200 with CUDA 13.0, cudaSetDevice does not give the fault's error, the first
// allocation does; a CUDA error in the device step would be CUDA_ERROR too: CreateSteps in
// dispatch_tests.) In a process of its own, as the test below.
TEST(DispatchDeathTest, ACreateAfterADeviceFaultSaysTheContextFailed) {
    SGEMM_REQUIRE_GPU(gpu);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const auto fault_then_create = [&] {
        GemmProblem p(spec_of(case_named("tiny odd TT"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
        if (const std::string unfaulted = fault_the_context(*gpu, p.args()); !unfaulted.empty()) return unfaulted;
        TempDir dir;
        const std::string path = dir.file("t.db");
        TuningStore(path).add_device(fingerprint_of(gpu->device));
        const sgemm_dispatch_options_t o = options(path);
        sgemm_dispatch_t handle = nullptr;
        const sgemm_dispatch_status_t status = sgemm_dispatch_create(&handle, &o);
        return "create: " + std::string(sgemm_dispatch_status_string(status)) + ": " + sgemm_dispatch_last_error();
    };
    EXPECT_EXIT(
        exit_telling(fault_then_create()),
        ::testing::ExitedWithCode(0),
        "create: SGEMM_DISPATCH_CUDA_ERROR[^\n]*an illegal memory access was encountered");
}

// After a device fault (an illegal address, which ends the context's work for good):
// - A call on cudaStreamPerThread that needs a per-stream workspace (a miss that falls back
//   to cuBLAS) cannot name its stream: the runtime no longer gives the stream's id. That is
//   the lost context, a CUDA error, where gemm used to say every workspace belonged to
//   another stream (TOO_MANY_STREAMS) with 7 of 8 free.
// - With a failed final write of the misses at once, destroy still writes nothing it cannot,
//   frees the handle, and names both failures, the device's first.
// The fault would spoil the CUDA context of every later test, so it happens in a process of
// its own: the threadsafe death test runs this test again in a new process, where the
// statement ends with the two statuses.
TEST(DispatchDeathTest, AfterADeviceFaultACallAndDestroySayTheContextFailed) {
    SGEMM_REQUIRE_GPU(gpu);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const auto fault_call_and_destroy = [&] {
        TempDir dir;
        const std::string path = dir.file("t.db");
        TuningStore(path).add_device(fingerprint_of(gpu->device));  // no winners: every call a miss
        const sgemm_dispatch_options_t o = recording_misses(path, kOnlyDestroyWrites);
        sgemm_dispatch_t handle = nullptr;
        if (sgemm_dispatch_create(&handle, &o) != SGEMM_DISPATCH_SUCCESS) return "create: " + std::string(sgemm_dispatch_last_error());
        GemmProblem p(spec_of(case_named("odd TN, no TN winner at align 4"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
        const SgemmArgs a = p.args();
        const ProblemSpec& s = p.spec();
        const auto call = [&](float* c, cudaStream_t stream) {
            return sgemm_dispatch_gemm(handle, s.trans_a ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N,
                                       s.trans_b ? SGEMM_DISPATCH_OP_T : SGEMM_DISPATCH_OP_N, s.M, s.N, s.K, s.alpha,
                                       a.A, a.lda, a.B, a.ldb, s.beta, c, a.ldc, stream);
        };
        if (call(a.C, gpu->stream.get()) != SGEMM_DISPATCH_SUCCESS)
            return "the miss: " + std::string(sgemm_dispatch_last_error());
        // C in memory freed just now: cuBLAS's kernel faults.
        float* const freed = freed_device_memory();
        if (!freed) return std::string("cudaMalloc or cudaFree failed");
        if (call(freed, gpu->stream.get()) != SGEMM_DISPATCH_SUCCESS)
            return "the faulting call: " + std::string(sgemm_dispatch_last_error());
        // Waits for the fault, whose error every later call of the context then meets.
        if (cudaStreamSynchronize(gpu->stream.get()) == cudaSuccess) return std::string("the call did not fault");
        const sgemm_dispatch_status_t call_status = call(a.C, cudaStreamPerThread);
        const std::string call_said = sgemm_dispatch_last_error();
        std::filesystem::remove(path);
        std::filesystem::create_directory(path);  // the final write of the misses fails
        const sgemm_dispatch_status_t status = sgemm_dispatch_destroy(handle);
        const std::string said = sgemm_dispatch_last_error();
        if (sgemm_dispatch_destroy(handle) != SGEMM_DISPATCH_INVALID_HANDLE) return std::string("destroyed twice");
        return "the call: " + std::string(sgemm_dispatch_status_string(call_status)) + ": " + call_said +
               " | destroy: " + sgemm_dispatch_status_string(status) + ": " + said;
    };
    EXPECT_EXIT(
        exit_telling(fault_call_and_destroy()),
        ::testing::ExitedWithCode(0),
        "the call: SGEMM_DISPATCH_CUDA_ERROR[^|]*cudaStreamGetId could not name the stream[^|]*\\| destroy: "
        "SGEMM_DISPATCH_CUDA_ERROR.*waiting for the device: an illegal memory access was encountered; and writing "
        "misses to .*t\\.db");
}

// A plan made after a device fault fails on loading its kernels into the lost context: a
// CUDA error that names the shape being prepared. (A plan's other failure, the host's
// refusal of memory, is status_of's, tested on the CPU.) In a process of its own, as above.
TEST(DispatchDeathTest, APlanAfterADeviceFaultSaysTheContextFailed) {
    SGEMM_REQUIRE_GPU(gpu);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const auto fault_then_prepare = [&] {
        TempDir dir;
        const std::string path = dir.file("t.db");
        TuningStore(path).add_device(fingerprint_of(gpu->device));
        // No winners: the shape's plan is a built-in kernel's, whose launch it loads.
        const sgemm_dispatch_options_t o = options(path, SGEMM_DISPATCH_FALLBACK_BUILTIN);
        sgemm_dispatch_t handle = nullptr;
        if (sgemm_dispatch_create(&handle, &o) != SGEMM_DISPATCH_SUCCESS) return "create: " + std::string(sgemm_dispatch_last_error());
        GemmProblem p(spec_of(case_named("warptile NN"), 1.0f, 0.0f), gpu->cublas, gpu->stream.get());
        const SgemmArgs a = p.args();
        if (const std::string unfaulted = fault_the_context(*gpu, a); !unfaulted.empty()) return unfaulted;
        const ProblemSpec& s = p.spec();
        const sgemm_dispatch_status_t status =
            sgemm_dispatch_prepare(handle, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, s.M, s.N, s.K, a.A, a.lda, a.B,
                                   a.ldb, a.C, a.ldc);
        return "prepare: " + std::string(sgemm_dispatch_status_string(status)) + ": " + sgemm_dispatch_last_error();
    };
    EXPECT_EXIT(exit_telling(fault_then_prepare()), ::testing::ExitedWithCode(0),
                "prepare: SGEMM_DISPATCH_CUDA_ERROR[^\n]*preparing the launch for M=200 N=384 K=256 NN fp32 "
                "align[0-9]+: [^\n]*an illegal memory access was encountered");
}

namespace {

// A time that a death test's process hands back in its exit status: tenths of a second, at
// most 250. kTimingFailed where it could not time (its standard error says why).
constexpr int kTimingFailed = 251;

[[noreturn]] void exit_with_tenths(double seconds) {
    std::_Exit(static_cast<int>(std::min(250L, std::lround(seconds * 10))));
}

[[noreturn]] void exit_failed_to_time(const std::string& why) {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::fflush(stderr);
    std::_Exit(kTimingFailed);
}

// EXPECT_EXIT's predicate: keeps the tenths a process handed back in `tenths`; false where
// it handed back none.
std::function<bool(int)> tenths_into(int& tenths) {
    return [&tenths](int status) {
        tenths = WIFEXITED(status) ? WEXITSTATUS(status) : kTimingFailed;
        return tenths != kTimingFailed;
    };
}

constexpr int kSquare = 1024;

// cuBLAS's first SGEMM of the process (kSquare cubed), beside a spinning kernel, made as
// dispatch makes its calls: on a handle bound to the stream and a workspace of its own.
[[noreturn]] void time_cublas_first_call(const sgemm::testing::GpuContext& gpu) {
    try {
        const sgemm::testing::Spinner spinner(compile_target_of(gpu.device));
        const std::size_t elements = std::size_t{kSquare} * kSquare;
        DeviceBuffer<float> a(elements), b(elements), c(elements);
        DeviceBuffer<unsigned char> workspace(32u << 20);
        const Stream stream;
        const CublasHandle cublas;
        if (cublas.bind(stream.get(), workspace.data(), workspace.bytes()) != CUBLAS_STATUS_SUCCESS)
            exit_failed_to_time("cublasSetStream or cublasSetWorkspace failed");
        SgemmArgs args{};
        args.M = args.N = args.K = kSquare;
        args.alpha = 1.0f;
        args.A = a.data(), args.B = b.data(), args.C = c.data();
        args.lda = args.ldb = args.ldc = kSquare;
        cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
        const double seconds = spinner.host_seconds_beside(
            [&](cudaStream_t) { status = cublas.sgemm_on_bound_stream(args, false, false); }, stream.get());
        if (status != CUBLAS_STATUS_SUCCESS) exit_failed_to_time(std::string("cublasSgemm: ") + cublasGetStatusString(status));
        exit_with_tenths(seconds);
    } catch (const std::exception& e) {
        exit_failed_to_time(e.what());
    }
}

// A dispatch handle's first gemm (kSquare cubed, a miss that goes to the cuBLAS fallback, in
// `precision`'s math mode), beside a spinning kernel, with the handle created before the
// spinner started.
[[noreturn]] void time_dispatch_first_cublas_call(const sgemm::testing::GpuContext& gpu,
                                                  sgemm_dispatch_precision_t precision) {
    try {
        const TempDir dir;
        const std::string path = dir.file("t.db");
        TuningStore(path).add_device(fingerprint_of(gpu.device));
        sgemm_dispatch_options_t o = options(path);
        o.precision = precision;
        Dispatch dispatch(o);
        const sgemm::testing::Spinner spinner(compile_target_of(gpu.device));
        const std::size_t elements = std::size_t{kSquare} * kSquare;
        DeviceBuffer<float> a(elements), b(elements), c(elements);
        sgemm_dispatch_choice_t choice{};
        if (sgemm_dispatch_query(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, kSquare, kSquare, kSquare,
                                 a.data(), kSquare, b.data(), kSquare, c.data(), kSquare, &choice) != SGEMM_DISPATCH_SUCCESS ||
            choice.route != SGEMM_DISPATCH_ROUTE_CUBLAS)
            exit_failed_to_time("the call does not go to cuBLAS: " + std::string(sgemm_dispatch_last_error()));
        const Stream stream;
        sgemm_dispatch_status_t status = SGEMM_DISPATCH_SUCCESS;
        const double seconds = spinner.host_seconds_beside(
            [&](cudaStream_t s) {
                status = sgemm_dispatch_gemm(dispatch.get(), SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, kSquare, kSquare,
                                             kSquare, 1.0f, a.data(), kSquare, b.data(), kSquare, 0.0f, c.data(),
                                             kSquare, s);
            },
            stream.get());
        if (status != SGEMM_DISPATCH_SUCCESS)
            exit_failed_to_time(std::string("gemm: ") + sgemm_dispatch_status_string(status) + ": " +
                                sgemm_dispatch_last_error());
        exit_with_tenths(seconds);
    } catch (const std::exception& e) {
        exit_failed_to_time(e.what());
    }
}

}  // namespace

// cuBLAS's first SGEMM in a process does a one-time set-up that waits for the device's other
// work even under CUDA_MODULE_LOADING=EAGER, where nothing else is loaded at a first call. A
// first gemm that dispatch sends to cuBLAS beside a kernel spinning on another stream (an
// all-reduce waiting for its peers) would wait for it; create makes that call instead. Each
// half runs in a process of its own, under EAGER (the threadsafe death test runs the binary
// again with the environment set here): cuBLAS alone shows that the spinner catches the
// first call (where it does not, the two cannot be told apart and the test skips), and
// dispatch's first gemm must not wait, in fp32 or in TF32 (cuBLAS's math mode differs).
TEST(DispatchDeathTest, UnderEagerLoadingAFirstGemmThroughCublasBesideASpinningKernelDoesNotWait) {
    SGEMM_REQUIRE_GPU(gpu);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const sgemm::testing::ScopedEnvironmentVariable eager("CUDA_MODULE_LOADING", "EAGER");
    int alone = kTimingFailed, fp32 = kTimingFailed, tf32 = kTimingFailed;
    EXPECT_EXIT(time_cublas_first_call(*gpu), tenths_into(alone), "");
    EXPECT_EXIT(time_dispatch_first_cublas_call(*gpu, SGEMM_DISPATCH_FP32), tenths_into(fp32), "");
    EXPECT_EXIT(time_dispatch_first_cublas_call(*gpu, SGEMM_DISPATCH_TF32), tenths_into(tf32), "");
    if (alone == kTimingFailed || fp32 == kTimingFailed || tf32 == kTimingFailed) return;  // EXPECT_EXIT said why
    std::printf("first cuBLAS call beside the spinner: cuBLAS alone held the host %.1f s, dispatch's gemm %.1f s "
                "(TF32: %.1f s)\n",
                alone / 10.0, fp32 / 10.0, tf32 / 10.0);
    const int wait_tenths = static_cast<int>(sgemm::testing::kSpinLimitSeconds * 10 / 3);
    EXPECT_LT(fp32, wait_tenths) << "dispatch's first gemm through cuBLAS waited for the spinning kernel";
    EXPECT_LT(tf32, wait_tenths) << "dispatch's first TF32 gemm through cuBLAS waited for the spinning kernel";
    if (alone < wait_tenths)
        GTEST_SKIP() << "cuBLAS's own first call did not wait beside the spinner either (" << alone / 10.0
                     << " s): the test cannot tell a create that makes it from one that does not";
}
