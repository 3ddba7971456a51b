// Configurations drawn at random from each family's whole space on this GPU, each run on a
// shape, transposes, scalars and layout drawn at random, against cuBLAS.
//
// Why: the suites of each family pick their cases by hand, one feature at a time, while the
// families declare 10^2 to 10^5 valid points each, and every point must be right at every
// shape it accepts. The tuner checks a winner only at its own shape; dispatch then also runs
// it at the shapes the nearest rule gives it, with other split counts on the same binary (a
// re-split, LoadedKernel::prepare with other values) and as a deterministic twin. So each
// sampled configuration is judged at an odd shape, again after a re-split where its binary
// splits K, and run twice: a kernel whose slices are not added by atomics must give the same
// bits both times.
//
// Then the same through dispatch: a database of winners drawn so (each a random configuration
// at a random shape it runs, a few of them cuBLAS), and calls at those shapes (the exact rule)
// and near them (M within a factor of 2, N and K up to 4 times larger or smaller: the nearest
// rule, with re-splits where the workspace is short), through the public API, against cuBLAS.
// Twice: with the cuBLAS fallback, and deterministic (atomic winners run by stand-ins) with
// the built-in fallback.
//
// The draws follow a fixed seed, so a failure repeats on a GPU of the same arch (the space
// drawn from is the arch's valid configurations); SGEMM_SAMPLE_SEED=<number> draws another
// sample (the seed is in every failure's message).
#include <gtest/gtest.h>
#include <sgemm/dispatch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include "src/records/kernel_records.h"
#include "tests/db/fixture.h"
#include "tests/gpu/gpu_test_env.h"
#include "tuner/gemm_problem.h"
#include "src/util/parallel_for.h"

using namespace sgemm;

namespace {

// Extents that sit on, just past and just short of the tiles' powers of two, and odd ones.
const std::vector<int> kExtents = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 129, 255, 257, 511, 1000};
// K also runs long, past several k-tiles of every split.
const std::vector<int> kDepths = {1, 2, 3, 5, 7, 16, 17, 63, 100, 129, 255, 1000, 1023, 2047, 4093};
// (alpha, beta): beta = 0 leaves NaN in C before the run, which must not be read.
const std::vector<std::pair<float, float>> kScalars = {{1.0f, 0.0f}, {-0.75f, 0.0f}, {1.5f, 0.5f}, {0.5f, -1.0f}};

std::uint64_t sample_seed() {
    const char* text = std::getenv("SGEMM_SAMPLE_SEED");
    return text && *text ? std::strtoull(text, nullptr, 10) : 20261204;
}

// How many configurations of each family: more of the two tuned families, whose spaces are
// large and whose configurations the tuner picks, and 4 of each ladder rung.
int sample_size(const Family& f) {
    if (f.name == "warptile") return 64;
    if (f.name == "decode") return 32;
    return 4;
}

struct SampledCase {
    ParamValues config;
    ProblemSpec spec;
    // Another split count for the same binary, as dispatch re-splits a winner; empty where
    // the configuration does not split K or no other count can run the shape.
    ParamValues resplit;
};

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& from) {
    return from[rng() % from.size()];
}

// The alignment class of a call on `spec`'s operands, as GemmProblem lays them out: each
// buffer 256-byte aligned, the operands spec.offset_floats into A's, B's and C's.
int alignment_of(const ProblemSpec& spec) {
    const void* start = reinterpret_cast<const void*>(std::uintptr_t{256} + 4u * spec.offset_floats);
    return alignment_class(start, spec.lda, start, spec.ldb, start, spec.ldc);
}

// A row of `floats` padded to a multiple of `step` floats, and at times by one step more.
int padded_row(std::mt19937_64& rng, int floats, int step) {
    return (floats + step - 1) / step * step + step * static_cast<int>(rng() % 2);
}

// Lays `spec`'s operands out for a call of alignment class `wanted` (16, 8 or 4): where they
// start (0 to 3 floats past 256 bytes) and how long their rows are (padded by up to 4
// floats), drawn until the class is the one wanted. Drawing the class first gives each
// class its share: tight rows of random lengths are class 4 nearly always, and the kernels'
// 16-byte paths would go untried.
void lay_out(std::mt19937_64& rng, ProblemSpec& spec, int wanted) {
    const int step = wanted / 4;  // floats: rows of class 16 are whole float4s, of 8 whole float2s
    do {
        spec.offset_floats = wanted == 16 ? 0 : wanted == 8 ? 2 * static_cast<int>(rng() % 2) : static_cast<int>(rng() % 4);
        spec.lda = padded_row(rng, spec.trans_a ? spec.M : spec.K, step);
        spec.ldb = padded_row(rng, spec.trans_b ? spec.K : spec.N, step);
        spec.ldc = padded_row(rng, spec.N, step);
    } while (alignment_of(spec) != wanted);
}

// A problem `config` reads: its TA and TB (as is, for a family without them), and operands of
// any alignment class the binary takes.
ProblemSpec draw_spec(std::mt19937_64& rng, const Family& f, const ParamValues& config) {
    ProblemSpec spec;
    spec.M = pick(rng, kExtents), spec.N = pick(rng, kExtents), spec.K = pick(rng, kDepths);
    std::tie(spec.alpha, spec.beta) = pick(rng, kScalars);
    for (bool ta : {false, true})
        for (bool tb : {false, true})
            if (f.reads_transposes(config, ta, tb)) spec.trans_a = ta, spec.trans_b = tb;
    lay_out(rng, spec, f.required_alignment(config) == 16 ? 16 : pick(rng, std::vector<int>{16, 8, 4}));
    spec.seed = rng();
    return spec;
}

// Another value of the split count that the same binary serves and that can run the shape.
ParamValues draw_resplit(std::mt19937_64& rng, const Family& f, const ParamValues& config, const ProblemSpec& s,
                         Arch arch) {
    if (!f.splits_k(config)) return {};
    for (std::size_t p = 0; p < f.params.size(); ++p) {
        if (!f.params[p].split_count) continue;
        std::vector<ParamValues> others;
        for (int count : f.params[p].values) {
            ParamValues other = config;
            other[p] = count;
            if (count > 1 && count != config[p] && f.invalid_reason(other, arch).empty() &&
                f.unsupported_shape_reason(other, s.M, s.N, s.K, arch).empty())
                others.push_back(other);
        }
        if (!others.empty()) return pick(rng, others);
    }
    return {};
}

// Each family draws from a stream of its own (numbered by its place in the registry), so
// sampling one family more changes no other's cases.
std::vector<SampledCase> draw_cases(const Family& f, std::size_t family_index, Arch arch, std::uint64_t seed) {
    std::seed_seq streams{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                          static_cast<std::uint32_t>(family_index)};
    std::mt19937_64 rng(streams);
    const std::vector<ParamValues> space = f.valid_configs(arch);
    std::vector<SampledCase> cases;
    // A family none of whose configurations fits the shapes drawn would have the loop draw
    // forever: the draws are bounded, and the test then says how many cases it found.
    for (int draws = 0; cases.size() < static_cast<std::size_t>(sample_size(f)) && draws < 100 * sample_size(f);
         ++draws) {
        const ParamValues& config = pick(rng, space);
        // A configuration too large for most shapes (shared memory growing with K) is
        // drawn again with another shape, and given up for another configuration at last.
        for (int attempt = 0; attempt < 16; ++attempt) {
            const ProblemSpec spec = draw_spec(rng, f, config);
            if (!f.unsupported_shape_reason(config, spec.M, spec.N, spec.K, arch).empty()) continue;
            cases.push_back({config, spec, draw_resplit(rng, f, config, spec, arch)});
            break;
        }
    }
    return cases;
}

std::string describe(const Family& f, const SampledCase& c, std::uint64_t seed) {
    const ProblemSpec& s = c.spec;
    std::ostringstream out;
    out << f.describe(c.config) << " on " << s.M << "x" << s.N << "x" << s.K << (s.trans_a ? " T" : " N")
        << (s.trans_b ? "T" : "N") << " alpha=" << s.alpha << " beta=" << s.beta << " lda=" << s.lda
        << " ldb=" << s.ldb << " ldc=" << s.ldc << " offset=" << s.offset_floats << " (SGEMM_SAMPLE_SEED=" << seed
        << ")";
    return out.str();
}

// One run of `launch` on `problem`, C poisoned first; the output as it came, and its judgement.
Accuracy run_checked(sgemm::testing::GpuContext& gpu, GemmProblem& problem, const KernelLaunch& launch,
                     std::vector<float>& output) {
    problem.reserve_workspace(launch.workspace_bytes);
    problem.poison_output(gpu.stream.get());
    const cudaError_t launched = launch.launch(problem.args(), gpu.stream.get());
    EXPECT_EQ(launched, cudaSuccess) << cudaGetErrorString(launched);
    output = problem.download_output();
    return problem.check_output();
}

// Parameterised by the family's place in all_families().
class SampledConfigs : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SampledConfigs, MatchCublasOnRandomShapesAndRepeat) {
    SGEMM_REQUIRE_GPU(gpu);
    const std::size_t family_index = GetParam();
    const Family& f = all_families().at(family_index);
    const Arch arch{gpu->device.sm()};
    const std::uint64_t seed = sample_seed();
    if (f.valid_configs(arch).empty()) GTEST_SKIP() << f.name << " has no configuration for " << arch.name();
    const std::vector<SampledCase> cases = draw_cases(f, family_index, arch, seed);
    ASSERT_EQ(cases.size(), static_cast<std::size_t>(sample_size(f)))
        << "the draws found too few configurations of " << f.name << " that run their shapes";

    // Compiling is the slow part: every CPU takes a share. Loading needs the device's context,
    // which is this thread's.
    std::vector<CompiledKernel> compiled(cases.size());
    parallel_for(cases.size(), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) compiled[i] = compile_kernel(f, cases[i].config, arch);
    });

    for (std::size_t i = 0; i < cases.size(); ++i) {
        const SampledCase& c = cases[i];
        SCOPED_TRACE(describe(f, c, seed));
        const LoadedKernel kernel(f, compiled[i]);
        GemmProblem problem(c.spec, gpu->cublas, gpu->stream.get());
        const int alignment = problem.call_alignment();
        ASSERT_EQ(alignment, alignment_of(c.spec)) << "the class drawn is not the class of the call";
        const KernelLaunch launch = kernel.prepare(c.spec.M, c.spec.N, c.spec.K, alignment);

        std::vector<float> first, second;
        const Accuracy a = run_checked(*gpu, problem, launch, first);
        EXPECT_TRUE(a.ok()) << a.verdict() << " (rel err norm " << a.rel_err_norm << ")";
        const Accuracy again = run_checked(*gpu, problem, launch, second);
        EXPECT_TRUE(again.ok()) << "second run: " << again.verdict();
        // Slices added by atomics round in the order they land; every other sum is fixed.
        if (!f.sums_with_atomics(c.config)) {
            EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
                << "two runs gave different bits";
        }

        if (!c.resplit.empty()) {
            SCOPED_TRACE("re-split as " + f.describe(c.resplit));
            ASSERT_TRUE(kernel.serves(c.resplit));
            std::vector<float> resplit_output;
            const Accuracy r = run_checked(
                *gpu, problem, kernel.prepare(c.spec.M, c.spec.N, c.spec.K, alignment, c.resplit), resplit_output);
            EXPECT_TRUE(r.ok()) << r.verdict() << " (rel err norm " << r.rel_err_norm << ")";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(EveryFamily, SampledConfigs, ::testing::Range<std::size_t>(0, all_families().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                             return all_families().at(info.param).name;
                         });

ShapeKey key_of(const ProblemSpec& spec) {
    ShapeKey key;
    key.M = spec.M, key.N = spec.N, key.K = spec.K, key.trans_a = spec.trans_a, key.trans_b = spec.trans_b;
    key.alignment = alignment_of(spec);
    return key;
}

// A call near `winner`, with its transposes and alignment class (which the nearest rule
// requires): M within a factor of 2, N and K from a quarter to 4 times the winner's.
ProblemSpec draw_call_near(std::mt19937_64& rng, const ProblemSpec& winner) {
    const auto scaled = [&](int extent, int low_divisor, int high_factor) {
        const int low = std::max(1, extent / low_divisor), high = extent * high_factor;
        return low + static_cast<int>(rng() % static_cast<std::uint64_t>(high - low + 1));
    };
    ProblemSpec call = winner;
    call.M = scaled(winner.M, 2, 2), call.N = scaled(winner.N, 4, 4), call.K = scaled(winner.K, 4, 4);
    std::tie(call.alpha, call.beta) = pick(rng, kScalars);
    lay_out(rng, call, alignment_of(winner));
    call.seed = rng();
    return call;
}

struct SampledDatabase {
    sgemm::testing::TempDir dir;
    std::string path;
    std::vector<ProblemSpec> winners;  // each winner's shape and layout, in the order stored
};

// `count` winners: warptile and decode configurations by turns at shapes they run, every
// fifth one cuBLAS (of either family's shape, by turns), each at a shape key of its own.
std::unique_ptr<SampledDatabase> sampled_database(const DeviceInfo& device, int count, std::uint64_t seed) {
    const Arch arch{device.sm()};
    std::seed_seq streams{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), 1000u};
    std::mt19937_64 rng(streams);
    const Family& warptile = find_family("warptile");
    const Family& decode = find_family("decode");
    const std::vector<ParamValues> warptile_space = warptile.valid_configs(arch), decode_space = decode.valid_configs(arch);

    struct Drawn {
        const Family* family;  // null: cuBLAS
        ParamValues config;
        ProblemSpec spec;
    };
    std::vector<Drawn> drawn;
    std::vector<ShapeKey> keys;
    while (static_cast<int>(drawn.size()) < count) {
        const bool cublas = drawn.size() % 5 == 4;
        const Family& f = drawn.size() % 2 ? decode : warptile;
        const ParamValues& config = pick(rng, drawn.size() % 2 ? decode_space : warptile_space);
        const ProblemSpec spec = draw_spec(rng, f, config);
        const ShapeKey key = key_of(spec);
        if (!f.unsupported_shape_reason(config, spec.M, spec.N, spec.K, arch).empty() ||
            std::find(keys.begin(), keys.end(), key) != keys.end())
            continue;
        keys.push_back(key);
        drawn.push_back({cublas ? nullptr : &f, config, spec});
    }
    std::vector<std::optional<Binary>> binaries(drawn.size());
    parallel_for(drawn.size(), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
            if (const Family* f = drawn[i].family)
                binaries[i] = to_binary(compile_kernel(*f, drawn[i].config, arch), kernel_ref(*f, drawn[i].config));
    });

    auto db = std::make_unique<SampledDatabase>();
    db->path = db->dir.file("sampled.db");
    TuningStore store(db->path);
    const std::string device_id = store.add_device(fingerprint_of(device));
    for (std::size_t i = 0; i < drawn.size(); ++i) {
        const Binary* binary = binaries[i] ? &*binaries[i] : nullptr;
        if (binary) store.put_binary(*binary);
        store.put_winner(sgemm::testing::winner(device_id, keys[i], 0.01, binary));
        db->winners.push_back(drawn[i].spec);
    }
    return db;
}

void call_through(const Dispatch& dispatch, const GemmProblem& problem, cudaStream_t stream) {
    const SgemmArgs a = problem.args();
    const ProblemSpec& s = problem.spec();
    dispatch.gemm(s.trans_a, s.trans_b, s.M, s.N, s.K, s.alpha, a.A, a.lda, a.B, a.ldb, s.beta, a.C, a.ldc, stream);
}

sgemm_dispatch_choice_t choice_for(const Dispatch& dispatch, const GemmProblem& problem) {
    const SgemmArgs a = problem.args();
    const ProblemSpec& s = problem.spec();
    return dispatch.query(s.trans_a, s.trans_b, s.M, s.N, s.K, a.A, a.lda, a.B, a.ldb, a.C, a.ldc);
}

std::string explanation(const Dispatch& dispatch, const GemmProblem& problem) {
    const SgemmArgs a = problem.args();
    const ProblemSpec& s = problem.spec();
    return dispatch.explain(s.trans_a, s.trans_b, s.M, s.N, s.K, a.A, a.lda, a.B, a.ldb, a.C, a.ldc);
}

TEST(SampledDispatch, RandomWinnersServeTheirShapesAndNearbyCallsAsCublasDoes) {
    SGEMM_REQUIRE_GPU(gpu);
    const std::uint64_t seed = sample_seed();
    const std::unique_ptr<SampledDatabase> db = sampled_database(gpu->device, 24, seed);
    sgemm_dispatch_options_t as_tuned = Dispatch::default_options();
    as_tuned.db_path = db->path.c_str();
    sgemm_dispatch_options_t deterministic = as_tuned;
    deterministic.deterministic = 1;
    deterministic.fallback = SGEMM_DISPATCH_FALLBACK_BUILTIN;

    // The calls: each winner's own shape and layout, and two near it.
    std::seed_seq streams{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), 2000u};
    std::mt19937_64 rng(streams);
    std::vector<std::pair<ProblemSpec, bool>> calls;  // the call, and whether it is a winner's own
    for (const ProblemSpec& w : db->winners) {
        calls.push_back({w, true});
        for (int near = 0; near < 2; ++near) calls.push_back({draw_call_near(rng, w), false});
    }

    for (const sgemm_dispatch_options_t& options : {as_tuned, deterministic}) {
        const Dispatch dispatch(options);
        int served_by_nearest_kernel = 0, resplit = 0;
        for (const auto& [spec, own] : calls) {
            std::ostringstream where;
            where << (options.deterministic ? "deterministic: " : "as tuned: ") << spec.M << "x" << spec.N << "x"
                  << spec.K << (spec.trans_a ? " T" : " N") << (spec.trans_b ? "T" : "N") << " alpha=" << spec.alpha
                  << " beta=" << spec.beta << " lda=" << spec.lda << " ldb=" << spec.ldb << " ldc=" << spec.ldc
                  << " offset=" << spec.offset_floats << " (SGEMM_SAMPLE_SEED=" << seed << ")";
            SCOPED_TRACE(where.str());
            GemmProblem problem(spec, gpu->cublas, gpu->stream.get());
            ASSERT_EQ(problem.call_alignment(), alignment_of(spec)) << "the class drawn is not the class of the call";
            const sgemm_dispatch_choice_t choice = choice_for(dispatch, problem);
            SCOPED_TRACE(choice.kernel);
            if (own) {
                EXPECT_EQ(choice.decision, SGEMM_DISPATCH_DECISION_EXACT);
            }
            if (options.deterministic) {
                EXPECT_EQ(std::string(choice.kernel).find("SUM_PASS=2"), std::string::npos)
                    << "a deterministic handle runs a kernel that adds into C with atomics";
            }
            if (choice.decision == SGEMM_DISPATCH_DECISION_NEAREST && choice.route == SGEMM_DISPATCH_ROUTE_KERNEL)
                ++served_by_nearest_kernel;
            if (explanation(dispatch, problem).find("re-split as") != std::string::npos) ++resplit;
            problem.poison_output(gpu->stream.get());
            call_through(dispatch, problem, gpu->stream.get());
            const Accuracy a = problem.check_output();
            EXPECT_TRUE(a.ok()) << a.verdict() << " (rel err norm " << a.rel_err_norm << ")";
        }
        // Most calls near a winner of this library's are its kernel's: the test is about them.
        EXPECT_GE(served_by_nearest_kernel, static_cast<int>(db->winners.size()) / 2)
            << (options.deterministic ? "deterministic" : "as tuned");
        std::printf("%s: %d of %zu nearby calls ran a winner's kernel by the nearest rule, %d of them re-split\n",
                    options.deterministic ? "deterministic" : "as tuned", served_by_nearest_kernel,
                    calls.size() - db->winners.size(), resplit);
    }
}

}  // namespace
