// The JIT core without a GPU: every ladder template compiles through NVRTC for sm_80 and
// sm_90, a sample of the decode space does so without spills on both (warptile's sample:
// test_warptile), invalid configurations are refused before NVRTC runs, compile errors
// carry the log, the ptxas figures are parsed, and timeline builds (sgemm-bench
// --timeline) compile apart from the product builds.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "src/families/registry.h"
#include "src/jit/compiler.h"
#include "src/jit/embedded_templates.h"
#include "src/jit/family_host_sources.h"
#include "tests/cpu/compile_samples.h"

using namespace sgemm;

namespace {

struct CompileCase {
    std::string family;
    ParamValues values;  // empty: the family's defaults
};

void PrintTo(const CompileCase& c, std::ostream* os) {
    *os << c.family;
    for (int v : c.values) *os << " " << v;
}

// The default and two other valid configurations of each family.
std::vector<CompileCase> compile_cases() {
    return {
        {"naive", {}},     {"naive", {16, 16}},             {"naive", {64, 4}},
        {"smem", {}},      {"smem", {8}},                   {"smem", {16}},
        {"blocktile", {}}, {"blocktile", {64, 64, 8, 4, 4}}, {"blocktile", {128, 64, 16, 8, 4}},
        {"vec4", {}},      {"vec4", {64, 64, 16, 4, 4}},     {"vec4", {128, 128, 16, 8, 8}},
        {"async", {}},     {"async", {64, 64, 16, 4, 4}},    {"async", {64, 128, 16, 8, 8}},
        {"decode", {}},    {"decode", {1, 256, 4, 1, 1, 0, 1, 0, 0}}, {"decode", {32, 128, 8, 1, 0, 1, 8, 0, 0}},
        {"warptile", {}},
        {"warptile", {128, 256, 16, 64, 64, 8, 16, 3, 0, 0, 1, 1, 0, 0, 0, 0, 0}},
        {"warptile", {128, 128, 8, 32, 64, 8, 8, 4, 1, 1, 1, 2, 0, 0, 0, 0, 0}},
    };
}

class CompileEveryTemplate : public ::testing::TestWithParam<std::tuple<CompileCase, int>> {};

TEST_P(CompileEveryTemplate, CompilesToACubinWithResourceFigures) {
    const auto& [c, sm] = GetParam();
    const Family& family = find_family(c.family);
    const ParamValues values = c.values.empty() ? family.defaults : c.values;
    const Arch arch{sm};
    ASSERT_EQ(family.invalid_reason(values, arch), "") << family.describe(values);

    const CompiledKernel k = compile_kernel(family, values, arch);
    EXPECT_FALSE(k.cubin.empty());
    EXPECT_EQ(k.lowered_name.rfind("_Z", 0), 0u) << k.lowered_name;  // a mangled C++ name
    EXPECT_NE(k.lowered_name.find(family.kernel), std::string::npos);
    EXPECT_EQ(k.name_expression, family.name_expression(values));
    EXPECT_GT(k.compile_ms, 0.0);
    ASSERT_TRUE(k.ptxas.found) << "no ptxas report in the log:\n" << k.log;
    EXPECT_GT(k.ptxas.registers, 0);
    EXPECT_LE(k.ptxas.registers, 255);
    if (c.values.empty()) {
        EXPECT_FALSE(k.ptxas.spills()) << family.describe(values) << " spills:\n" << k.log;
    }
    // An ELF image: what cudaLibraryLoadData expects.
    ASSERT_GE(k.cubin.size(), 4u);
    EXPECT_EQ(std::string(k.cubin.data() + 1, 3), "ELF");
}

INSTANTIATE_TEST_SUITE_P(Ladder, CompileEveryTemplate,
                         ::testing::Combine(::testing::ValuesIn(compile_cases()), ::testing::Values(80, 90)),
                         [](const auto& info) {
                             const CompileCase& c = std::get<0>(info.param);
                             std::string name = c.family + "_sm" + std::to_string(std::get<1>(info.param));
                             for (int v : c.values) name += "_" + std::to_string(v);
                             return c.values.empty() ? name + "_default" : name;
                         });

// Decode binaries spread evenly over the space, for sm_80 and for sm_90 and for each way of
// storing B (TB) three without split-K and two with it, and on sm_80 two with 1 and 2 rows and UNROLL 1, whose split-K finish
// spilled predicates there while its loads were predicated per element: none may spill. (Of
// the whole space three tiles spilled on sm_80, all with 8 rows and split-K: BN=64 KW=2
// UNROLL=2, and with TB BN=128 or 256 KW=2 UNROLL=1, either EF: the family leaves them out
// there and on sm_75; on sm_90, where they stay, they compile cleanly.)
// Of the decode binaries for `arch` that `in_part` accepts, three without split-K and two with
// it, spread evenly, compile without spills.
void expect_decode_part_compiles_without_spills(Arch arch, const std::function<bool(const ParamValues&)>& in_part) {
    const Family& f = find_family("decode");
    std::vector<ParamValues> whole, split;
    for (const ParamValues& v : sgemm::testing::distinct_binaries(f, arch))
        if (in_part(v)) (f.value(v, "SPLITS") > 1 ? split : whole).push_back(v);
    ASSERT_GE(whole.size(), 3u);
    ASSERT_GE(split.size(), 2u);
    for (const ParamValues& v : sgemm::testing::spread_sample(whole, 3)) sgemm::testing::expect_compiles_without_spills(f, v, arch);
    for (const ParamValues& v : sgemm::testing::spread_sample(split, 2)) sgemm::testing::expect_compiles_without_spills(f, v, arch);
}

TEST(CompileSamples, DecodeBinariesCompileWithoutSpills) {
    const Family& f = find_family("decode");
    for (int sm : {80, 90})
        for (int tb : {0, 1})
            expect_decode_part_compiles_without_spills(
                Arch{sm}, [&](const ParamValues& v) { return f.value(v, "TB") == tb && f.value(v, "RING") == 0; });
    sgemm::testing::expect_compiles_without_spills(f, {1, 64, 4, 1, 1, 0, 2, 0, 0}, Arch{80});
    sgemm::testing::expect_compiles_without_spills(f, {2, 128, 2, 1, 0, 0, 2, 0, 0}, Arch{80});
    sgemm::testing::expect_compiles_without_spills(f, {8, 64, 2, 2, 1, 0, 2, 0, 0}, Arch{90});
    sgemm::testing::expect_compiles_without_spills(f, {8, 128, 2, 1, 1, 1, 2, 0, 0}, Arch{90});
    // Split-K binaries that leave the sum to the sum pass (SUM_PASS, the last value).
    sgemm::testing::expect_compiles_without_spills(f, {8, 128, 8, 4, 1, 0, 4, 0, 1}, Arch{80});
    sgemm::testing::expect_compiles_without_spills(f, {4, 128, 4, 1, 1, 1, 8, 0, 1}, Arch{90});
}

// Decode binaries with a ring of B in shared memory (TB only, sm_80+), spread over that part
// of the space, for sm_80 and sm_90: three without split-K and two with it, none may spill.
TEST(CompileSamples, DecodeRingBinariesCompileWithoutSpills) {
    const Family& f = find_family("decode");
    for (int sm : {80, 90})
        expect_decode_part_compiles_without_spills(Arch{sm}, [&](const ParamValues& v) { return f.value(v, "RING") > 0; });
}

// The decode family stages A with cp.async only where the target has it (sm_80+); on sm_75
// the same source must compile, through registers (ptxas refuses cp.async there).
TEST(CompileSamples, DecodeCompilesForTuringWithoutCpAsync) {
    const Family& f = find_family("decode");
    for (const ParamValues& v : {f.defaults, ParamValues{4, 64, 32, 2, 1, 0, 1, 0, 0}, ParamValues{4, 64, 32, 2, 1, 1, 1, 0, 0}})
        sgemm::testing::expect_compiles_without_spills(f, v, Arch{75});
}

// Where a GPU driver is installed, NVRTC 12.9+ would serve a repeated compile from the
// driver's cache, with no ptxas report in the log; the compiler turns that cache off. On a
// machine without a driver both compiles run ptxas either way.
TEST(Compiler, ARepeatedCompileStillReportsRegistersAndSpills) {
    const Family& f = find_family("naive");
    for (int round = 0; round < 2; ++round) {
        const CompiledKernel k = compile_kernel(f, f.defaults, Arch{90});
        EXPECT_TRUE(k.ptxas.found) << "round " << round << ":\n" << k.log;
        EXPECT_GT(k.ptxas.registers, 0) << "round " << round;
    }
}

TEST(Compiler, RefusesAValueOutsideTheParameterListBeforeNvrtc) {
    const Family& f = find_family("blocktile");
    try {
        compile_kernel(f, {128, 128, 8, 3, 8}, Arch{90});
        FAIL() << "expected InvalidConfigError";
    } catch (const InvalidConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("TM=3 is not one of {2,4,8,16}"), std::string::npos) << e.what();
    }
}

TEST(Compiler, RefusesAConfigurationThatBreaksAConstraint) {
    const Family& f = find_family("vec4");
    // 256x256 with a 4x4 thread tile needs 4096 threads.
    try {
        compile_kernel(f, {256, 256, 8, 4, 4}, Arch{90});
        FAIL() << "expected InvalidConfigError";
    } catch (const InvalidConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("4096 threads"), std::string::npos) << e.what();
    }
}

TEST(Compiler, RefusesAFamilyOnAnArchThatIsTooOld) {
    const Family& f = find_family("async");
    EXPECT_THROW(compile_kernel(f, f.defaults, Arch{75}), InvalidConfigError);
}

TEST(Compiler, ACompileErrorCarriesTheLog) {
    Family broken = find_family("naive");
    broken.kernel = "no_such_kernel";  // the name expression names nothing in the source
    try {
        compile_kernel(broken, broken.defaults, Arch{90});
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("no_such_kernel"), std::string::npos) << what;
        EXPECT_NE(what.find("error"), std::string::npos) << "the NVRTC log should be in the message: " << what;
    }
}

TEST(Compiler, AStandaloneSourceSeesItsDefinesAndReportsItsErrors) {
    const std::string source =
        "#ifndef WIDTH\n#error WIDTH is not defined\n#endif\n"
        "extern \"C\" __global__ void fill(float* out) { out[threadIdx.x % WIDTH] = 1.0f; }\n";
    const StandaloneKernel k = compile_standalone("fill.cu", source, {"WIDTH=4"}, Arch{80});
    EXPECT_FALSE(k.cubin.empty());
    EXPECT_TRUE(k.ptxas.found);
    try {
        compile_standalone("fill.cu", source, {}, Arch{80});
        FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("fill.cu"), std::string::npos) << what;
        EXPECT_NE(what.find("WIDTH is not defined"), std::string::npos) << "the NVRTC log should be in the message: " << what;
    }
}

// A standalone source sees a template it names, and what that includes, and no other.
TEST(Compiler, AStandaloneSourceMayIncludeTheTemplateItNames) {
    const std::string source =
        "#include \"sgemm_common.cuh\"\n"
        "extern \"C\" __global__ void store_one(const SgemmArgs p) { sgemm_store(p, 0, 0, 1.0f); }\n";
    const StandaloneKernel k = compile_standalone("store_one.cu", source, {}, Arch{90}, "sgemm_common.cuh");
    EXPECT_FALSE(k.cubin.empty());
    EXPECT_THROW(compile_standalone("store_one.cu", source, {}, Arch{90}), CompileError);
    // sgemm_naive.cuh includes sgemm_common.cuh, not the other way round.
    EXPECT_THROW(compile_standalone("naive.cu", "#include \"sgemm_naive.cuh\"\n", {}, Arch{90}, "sgemm_common.cuh"),
                 CompileError);
    try {
        compile_standalone("store_one.cu", source, {}, Arch{90}, "no_such_template.cuh");
        FAIL() << "expected an error for a template that does not exist";
    } catch (const CompileError& e) {
        FAIL() << "the name was not refused before NVRTC ran: " << e.what();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no embedded template named 'no_such_template.cuh'"), std::string::npos)
            << e.what();
    }
}

// NVRTC reads headers only from those it is given: never a file beside the program's name
// (the working directory), whose text no template hash would cover.
TEST(Compiler, NoHeaderComesFromTheDisk) {
    const std::filesystem::path folder = std::filesystem::temp_directory_path() / ("sgemm-jit-" + std::to_string(getpid()));
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "on_disk.cuh") << "#define ON_DISK 1\n";
    const std::filesystem::path before = std::filesystem::current_path();
    std::filesystem::current_path(folder);
    std::string what;
    try {
        compile_standalone("probe.cu", "#include \"on_disk.cuh\"\nextern \"C\" __global__ void probe(int* p) { *p = ON_DISK; }\n",
                           {}, Arch{90});
    } catch (const CompileError& e) {
        what = e.what();
    }
    std::filesystem::current_path(before);
    std::filesystem::remove_all(folder);
    EXPECT_NE(what.find("on_disk.cuh"), std::string::npos) << "the header on disk was read: " << what;
}

void ignore_for_the_test(int) {}

// Warms NVRTC up, then compiles while a thread watches the SIGINT and SIGTERM handlers: 1 if
// either was ever another than the one set here, 0 if both stayed.
int warm_up_then_watch_the_interrupt_handler() {
    signal(SIGINT, ignore_for_the_test);
    signal(SIGTERM, ignore_for_the_test);
    warm_up_nvrtc();
    std::atomic<bool> compiled{false}, replaced{false};
    std::thread watcher([&] {
        while (!compiled) {
            for (const int signal_number : {SIGINT, SIGTERM}) {
                struct sigaction now {};
                sigaction(signal_number, nullptr, &now);
                if (now.sa_handler != ignore_for_the_test) replaced = true;
            }
        }
    });
    compile_standalone("probe.cu", "extern \"C\" __global__ void probe() {}\n", {}, Arch{90});
    compiled = true;
    watcher.join();
    return replaced ? 1 : 0;
}

// NVRTC's first compile in a process holds SIGINT and SIGTERM handlers of its own for a moment
// (a Ctrl-C then ends the process with status 4, silently). After warm_up_nvrtc a compile must
// leave the process's handlers in place throughout. The check runs in a fresh process (the threadsafe
// death test runs this binary again for it), where NVRTC has compiled nothing yet.
TEST(Compiler, AfterTheWarmUpACompileLeavesTheInterruptHandlerInPlace) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(std::exit(warm_up_then_watch_the_interrupt_handler()), ::testing::ExitedWithCode(0), "");
}

void take_siginfo_for_the_test(int, siginfo_t*, void*) {}

// Sets SIGINT's, SIGTERM's and SIGXFSZ's handlers as a host process might (three arguments, on
// an alternate stack, no restart), compiles a kernel, and says what of them changed ("" if
// nothing did).
std::string compile_and_compare_the_signal_handlers() {
    const int signals[] = {SIGINT, SIGTERM, SIGXFSZ};
    struct sigaction set {};
    set.sa_sigaction = take_siginfo_for_the_test;
    set.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&set.sa_mask);
    for (const int s : signals) sigaction(s, &set, nullptr);
    compile_standalone("probe.cu", "extern \"C\" __global__ void probe() {}\n", {}, Arch{90});
    std::string changed;
    for (const int s : signals) {
        struct sigaction now {};
        sigaction(s, nullptr, &now);
        if (now.sa_sigaction != take_siginfo_for_the_test) changed += " signal " + std::to_string(s) + ": its handler;";
        if ((now.sa_flags & (SA_SIGINFO | SA_ONSTACK | SA_RESTART)) != (SA_SIGINFO | SA_ONSTACK))
            changed += " signal " + std::to_string(s) + ": its flags;";
        for (const int m : signals)
            if (sigismember(&now.sa_mask, m)) changed += " signal " + std::to_string(s) + ": its mask;";
    }
    return changed;
}

// The first compile in a process (NVRTC's, the threadsafe death test's fresh process) leaves
// the host process's handlers as they were, flags and mask too: NVRTC put them back without
// SA_SIGINFO and SA_ONSTACK and with SA_RESTART, which an engine that links the dispatch
// library, whose create may compile, would have found changed under it.
TEST(Compiler, TheFirstCompileLeavesTheProcesssSignalHandlersAsTheyWere) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const std::string changed = compile_and_compare_the_signal_handlers();
            std::fprintf(stderr, "changed:%s.\n", changed.c_str());
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "changed:\\.");
}

TEST(Compiler, SplitCountsShareABinaryOnEachSideOfOne) {
    const Family& f = find_family("decode");
    // The template sees only whether SPLITS exceeds 1.
    EXPECT_EQ(f.name_expression({8, 128, 8, 4, 1, 0, 1, 0, 0}), "sgemm_decode<8, 128, 8, 4, 1, 0, false, 0, 0>");
    EXPECT_EQ(f.name_expression({8, 128, 8, 4, 0, 0, 16, 0, 0}), "sgemm_decode<8, 128, 8, 4, 0, 0, true, 0, 0>");
    EXPECT_EQ(kernel_cache_key(f, {8, 128, 8, 4, 1, 0, 2, 0, 0}, Arch{90}), kernel_cache_key(f, {8, 128, 8, 4, 1, 0, 16, 0, 0}, Arch{90}));
    EXPECT_NE(kernel_cache_key(f, {8, 128, 8, 4, 1, 0, 1, 0, 0}, Arch{90}), kernel_cache_key(f, {8, 128, 8, 4, 1, 0, 2, 0, 0}, Arch{90}));
    EXPECT_NE(kernel_cache_key(f, {8, 128, 8, 4, 1, 0, 1, 0, 0}, Arch{90}), kernel_cache_key(f, {16, 128, 8, 4, 1, 0, 1, 0, 0}, Arch{90}));
}

TEST(Compiler, CacheKeyChangesWithConfigurationAndArch) {
    const Family& f = find_family("async");
    const std::string key = kernel_cache_key(f, f.defaults, Arch{90});
    EXPECT_EQ(key.size(), 16u);
    EXPECT_EQ(key, kernel_cache_key(f, f.defaults, Arch{90}));
    EXPECT_NE(key, kernel_cache_key(f, f.defaults, Arch{80}));
    EXPECT_NE(key, kernel_cache_key(f, {64, 64, 8, 4, 4}, Arch{90}));
    EXPECT_NE(key, kernel_cache_key(find_family("vec4"), f.defaults, Arch{90}));
}

// The key covers the family's host code (the file that declares it: how its parameters become
// a grid and shared memory), not only the source it renders: a binary stored by a build whose
// launch code differed must not be reused. Nothing else here told the two apart.
TEST(Compiler, CacheKeyChangesWithTheFamilysHostCode) {
    const Family& f = find_family("async");
    Family declared_elsewhere = f;
    declared_elsewhere.host_source = find_family("decode").host_source;
    ASSERT_NE(declared_elsewhere.host_source, f.host_source);
    EXPECT_NE(kernel_cache_key(declared_elsewhere, f.defaults, Arch{90}), kernel_cache_key(f, f.defaults, Arch{90}));
}

// Timeline builds (sgemm-bench --timeline) define SGEMM_TIMELINE, and the GPU tests' builds
// whose first split-K slice comes late SGEMM_TEST_LATE_FIRST_SLICE; no two kinds of build
// share a cache key, so a database never mistakes one for the product kernel. The keys are
// asked for in the order that once let a memo hand the product's key to a later build.
TEST(Compiler, OtherBuildsAreKeptApartFromProductBuilds) {
    const auto has = [](const std::vector<std::string>& options, const char* macro) {
        return std::find(options.begin(), options.end(), macro) != options.end();
    };
    for (const char* macro : {"-DSGEMM_TIMELINE", "-DSGEMM_TEST_LATE_FIRST_SLICE"})
        EXPECT_FALSE(has(compile_options(Arch{90}), macro));
    EXPECT_TRUE(has(compile_options(Arch{90}, KernelBuild::timeline), "-DSGEMM_TIMELINE"));
    EXPECT_TRUE(has(compile_options(Arch{90}, KernelBuild::late_first_slice), "-DSGEMM_TEST_LATE_FIRST_SLICE"));
    const Family& f = find_family("warptile");
    const std::string product = kernel_cache_key(f, f.defaults, Arch{90}),
                      timeline = kernel_cache_key(f, f.defaults, Arch{90}, KernelBuild::timeline),
                      late = kernel_cache_key(f, f.defaults, Arch{90}, KernelBuild::late_first_slice);
    EXPECT_NE(product, timeline);
    EXPECT_NE(product, late);
    EXPECT_NE(timeline, late);
    EXPECT_EQ(late, kernel_cache_key(f, f.defaults, Arch{90}, KernelBuild::late_first_slice));
}

// Every family that marks timelines compiles as a timeline build, with and without
// split-K, on both archs, without spilling, and the marks change the binary.
TEST(Compiler, TimelineBuildsCompileAndDifferFromProductBuilds) {
    const std::vector<std::pair<std::string, ParamValues>> cases = {
        {"warptile", {32, 128, 16, 32, 64, 8, 8, 3, 0, 0, 2, 8, 0, 0, 0, 0, 0}},
        {"warptile", {64, 128, 16, 32, 64, 8, 8, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0}},
        {"decode", {8, 256, 8, 1, 1, 0, 8, 0, 0}},
        {"decode", {1, 128, 8, 2, 1, 0, 1, 0, 0}},
        {"decode", {8, 256, 8, 1, 1, 1, 8, 0, 0}},
    };
    for (const auto& [name, values] : cases)
        for (int sm : {80, 90}) {
            const Family& f = find_family(name);
            SCOPED_TRACE(f.describe(values) + " for sm_" + std::to_string(sm));
            ASSERT_TRUE(f.records_timeline);
            const CompiledKernel timeline = compile_kernel(f, values, Arch{sm}, KernelBuild::timeline);
            ASSERT_TRUE(timeline.ptxas.found) << timeline.log;
            EXPECT_FALSE(timeline.ptxas.spills()) << timeline.log;
            EXPECT_NE(timeline.cubin, compile_kernel(f, values, Arch{sm}).cubin);
        }
}

TEST(Compiler, ReportsTheNvrtcVersion) {
    const std::string v = nvrtc_version();
    EXPECT_NE(v.find('.'), std::string::npos) << v;
}

TEST(PtxasInfo, ParsesTheVerboseReport) {
    const std::string log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function '_Z11sgemm_asyncILi128EEv9SgemmArgs' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z11sgemm_asyncILi128EEv9SgemmArgs\n"
        "    48 bytes stack frame, 44 bytes spill stores, 52 bytes spill loads\n"
        "ptxas info    : Used 128 registers, used 1 barriers, 16640 bytes smem, 400 bytes cmem[0]\n";
    const PtxasInfo info = parse_ptxas_info(log);
    EXPECT_TRUE(info.found);
    EXPECT_EQ(info.registers, 128);
    EXPECT_EQ(info.shared_bytes, 16640);
    EXPECT_EQ(info.stack_bytes, 48);
    EXPECT_EQ(info.spill_store_bytes, 44);
    EXPECT_EQ(info.spill_load_bytes, 52);
    EXPECT_TRUE(info.spills());
}

// A program with a stream-K tail has two reports: each figure is the larger of the two,
// whichever kernel comes first.
TEST(PtxasInfo, TwoKernelsGiveTheLargerOfEachFigure) {
    const auto report = [](int stack, int stores, int loads, int registers, int smem) {
        return "ptxas info    : Function properties for kernel\n    " + std::to_string(stack) + " bytes stack frame, " +
               std::to_string(stores) + " bytes spill stores, " + std::to_string(loads) + " bytes spill loads\n" +
               "ptxas info    : Used " + std::to_string(registers) + " registers, used 1 barriers, " +
               std::to_string(smem) + " bytes smem, 400 bytes cmem[0]\n";
    };
    const PtxasInfo info = parse_ptxas_info(report(0, 0, 0, 228, 512) + report(16, 8, 12, 255, 1024));
    EXPECT_EQ(info.registers, 255);
    EXPECT_EQ(info.shared_bytes, 1024);
    EXPECT_EQ(info.stack_bytes, 16);
    EXPECT_EQ(info.spill_store_bytes, 8);
    EXPECT_EQ(info.spill_load_bytes, 12);
    const PtxasInfo reversed = parse_ptxas_info(report(16, 8, 12, 255, 1024) + report(0, 0, 0, 228, 512));
    EXPECT_EQ(reversed.registers, 255);
    EXPECT_EQ(reversed.spill_load_bytes, 12);
}

TEST(PtxasInfo, ALogWithoutAReportIsNotFound) {
    EXPECT_FALSE(parse_ptxas_info("nothing here").found);
}

TEST(Arch, ParsesTheUsualSpellings) {
    EXPECT_EQ(parse_arch("sm_90").sm, 90);
    EXPECT_EQ(parse_arch("80").sm, 80);
    EXPECT_EQ(parse_arch("8.6").sm, 86);
    EXPECT_EQ(parse_arch("SM_90").sm, 90);  // any case, as the other names the tools take
    EXPECT_EQ(Arch{90}.name(), "sm_90");
    EXPECT_THROW(parse_arch("hopper"), Error);
    EXPECT_THROW(parse_arch("sm_9"), Error);
    // One dot, in X.Y alone: these read as sm_90, sm_90, sm_100 and sm_123 (dots dropped).
    for (const char* malformed : {"9..0", "sm_9.0", "sm_1.00", "1.2.3", ".90", "90."})
        EXPECT_THROW(parse_arch(malformed), Error) << malformed;
    try {
        parse_arch("1.2.3");
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("invalid architecture '1.2.3': expected sm_XY, XY or X.Y"), std::string::npos)
            << e.what();
    }
}

// Which targets exist depends on the toolkit (CUDA 13 dropped sm_70 and sm_72, CUDA 12
// still has sm_50 on), so the expectations come from NVRTC's own list, from sm_70 up.
TEST(Arch, AcceptsExactlyTheArchitecturesNvrtcCompilesForFromSm70) {
    const std::vector<int>& targets = compile_targets();
    ASSERT_FALSE(targets.empty());
    EXPECT_TRUE(std::is_sorted(targets.begin(), targets.end()));
    EXPECT_GE(targets.front(), 70);
    for (int sm : targets) {
        EXPECT_EQ(parse_arch("sm_" + std::to_string(sm)).sm, sm);
        EXPECT_EQ(unsupported_arch_reason(Arch{sm}), "");
    }
    for (int sm : {50, 60, 70, 72, 91, targets.front() - 1, targets.back() + 1}) {
        if (std::find(targets.begin(), targets.end(), sm) != targets.end()) continue;
        const std::string why = unsupported_arch_reason(Arch{sm});
        EXPECT_NE(why.find("sm_" + std::to_string(sm) + " is not a compile target"), std::string::npos) << why;
        EXPECT_NE(why.find(Arch{targets.front()}.name()), std::string::npos) << "names the targets: " << why;
        try {
            parse_arch("sm_" + std::to_string(sm));
            ADD_FAILURE() << "sm_" << sm << " parsed";
        } catch (const Error& e) {
            EXPECT_EQ(e.what(), why);
        }
    }
}

// A compile for an architecture NVRTC cannot target says so in these words, not in NVRTC's
// ("invalid value for --gpu-architecture", an option's failure, which reads as NVRTC's own
// and which dispatch's scaling kernel tried again at every call), and as a CompileError: the
// same answer would come every time. sm_72 passes the families' "sm_70 or newer".
TEST(Arch, ACompileForAnArchitectureNvrtcCannotTargetIsRefusedInItsWords) {
    const std::vector<int>& targets = compile_targets();
    for (int sm : {72, 95, targets.back() + 1}) {
        if (std::find(targets.begin(), targets.end(), sm) != targets.end()) continue;
        try {
            compile_kernel(find_family("naive"), find_family("naive").defaults, Arch{sm});
            ADD_FAILURE() << "naive compiled for sm_" << sm;
        } catch (const CompileError& e) {
            EXPECT_NE(std::string(e.what()).find(unsupported_arch_reason(Arch{sm})), std::string::npos) << e.what();
        }
        try {
            compile_standalone("fill.cu", "extern \"C\" __global__ void fill(float* out) { out[0] = 1.0f; }\n", {}, Arch{sm});
            ADD_FAILURE() << "a standalone source compiled for sm_" << sm;
        } catch (const CompileError& e) {
            EXPECT_EQ(std::string(e.what()), "cannot compile fill.cu for sm_" + std::to_string(sm) + ": " +
                                                 unsupported_arch_reason(Arch{sm}));
        }
    }
}

TEST(Arch, AGpuThatIsNoCompileTargetIsNamedInTheError) {
    DeviceInfo device;
    device.name = "Tesla P100";
    device.cc_major = 6, device.cc_minor = 0;
    try {
        compile_target_of(device);
        FAIL() << "sm_60 accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "Tesla P100: " + unsupported_arch_reason(Arch{60}));
    }
    device.cc_major = 9, device.cc_minor = 0;
    EXPECT_EQ(compile_target_of(device).sm, 90);
}

TEST(EmbeddedTemplates, HoldEveryLadderSource) {
    for (const Family& f : all_families()) {
        const char* const embedded = find_embedded(embedded_templates(), f.template_file);
        ASSERT_NE(embedded, nullptr) << f.template_file;
        const std::string text = embedded;
        EXPECT_NE(text.find("__global__"), std::string::npos) << f.template_file;
        EXPECT_NE(text.find(f.kernel), std::string::npos) << f.template_file;
    }
    const char* const common = find_embedded(embedded_templates(), "sgemm_common.cuh");
    ASSERT_NE(common, nullptr);
    EXPECT_NE(std::string(common).find("struct SgemmArgs"), std::string::npos);
    EXPECT_EQ(find_embedded(embedded_templates(), "missing.cuh"), nullptr);
}

std::vector<std::string> names_of(const std::vector<EmbeddedFile>& files) {
    std::vector<std::string> names;
    for (const EmbeddedFile& f : files) names.push_back(f.name);
    return names;
}

// A template's sources are itself and what it includes, through other templates too, each
// once, however spelt; an include in a comment, or of a name that is no template, is none.
TEST(TemplateSources, AreTheTemplateAndWhatItIncludes) {
    const std::vector<EmbeddedFile> files = {
        {"top.cuh", "// #include \"unused.cuh\"\n#include \"mid.cuh\"\n  #  include \"leaf.cuh\"\n#include <cstdio>\n"},
        {"mid.cuh", "#pragma once\n#include \"leaf.cuh\"\n#include \"top.cuh\"\n#include \"elsewhere.cuh\"\n"},
        {"leaf.cuh", "#pragma once\nint leaf;\n"},
        {"unused.cuh", "int unused;\n"},
    };
    EXPECT_EQ(names_of(template_and_includes("top.cuh", files)), (std::vector<std::string>{"leaf.cuh", "mid.cuh", "top.cuh"}));
    EXPECT_EQ(names_of(template_and_includes("mid.cuh", files)), (std::vector<std::string>{"leaf.cuh", "mid.cuh", "top.cuh"}));
    EXPECT_EQ(names_of(template_and_includes("leaf.cuh", files)), std::vector<std::string>{"leaf.cuh"});
    EXPECT_THROW(template_and_includes("elsewhere.cuh", files), Error);
}

// So editing a template changes the hash of the templates that include it, and no other's:
// a stored kernel of another family stays usable.
TEST(TemplateSources, TheHashFollowsOnlyTheFilesATemplateIncludes) {
    const std::vector<EmbeddedFile> files = {
        {"one.cuh", "#include \"shared.cuh\"\nint one;\n"},
        {"two.cuh", "#include \"shared.cuh\"\nint two;\n"},
        {"shared.cuh", "int shared;\n"},
    };
    const std::string one = template_sources_hash("one.cuh", files), two = template_sources_hash("two.cuh", files);
    EXPECT_NE(one, two);
    std::vector<EmbeddedFile> one_edited = files, shared_edited = files;
    one_edited[0].text = "#include \"shared.cuh\"\nint one, more;\n";
    shared_edited[2].text = "int shared, more;\n";
    EXPECT_NE(template_sources_hash("one.cuh", one_edited), one);
    EXPECT_EQ(template_sources_hash("two.cuh", one_edited), two);
    EXPECT_NE(template_sources_hash("one.cuh", shared_edited), one);
    EXPECT_NE(template_sources_hash("two.cuh", shared_edited), two);
    EXPECT_EQ(template_sources_hash("one.cuh", files), one) << "the same sources hash alike";
}

// The real templates: each family's sources hold its own template and the common one, decode's
// none of warptile's own, and every quoted include of the templates is a template (else a
// template's edits could go unseen by the hash of one that includes it).
TEST(TemplateSources, EachFamilyHasItsOwn) {
    for (const Family& f : all_families()) {
        const std::vector<std::string> names = names_of(template_and_includes(f.template_file));
        for (const std::string& expected : {f.template_file, std::string("sgemm_common.cuh")})
            EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << f.name << " lacks " << expected;
    }
    const std::vector<std::string> decode = names_of(template_and_includes(find_family("decode").template_file)),
                                   warptile = names_of(template_and_includes(find_family("warptile").template_file));
    for (const char* own : {"sgemm_warptile.cuh", "sgemm_staging.cuh", "sgemm_warptile_places.cuh"}) {
        EXPECT_EQ(std::find(decode.begin(), decode.end(), own), decode.end()) << own;
        EXPECT_NE(std::find(warptile.begin(), warptile.end(), own), warptile.end()) << own;
    }
    EXPECT_NE(std::find(decode.begin(), decode.end(), "sgemm_splitk.cuh"), decode.end());
    EXPECT_NE(template_sources_hash("sgemm_decode.cuh"), template_sources_hash("sgemm_warptile.cuh"));

    std::vector<std::string> all;
    for (const EmbeddedFile& f : embedded_templates()) all.push_back(f.name);
    for (const EmbeddedFile& f : embedded_templates()) {
        std::istringstream lines(f.text);
        for (std::string line; std::getline(lines, line);) {
            const std::size_t include = line.find("#include \"");
            if (include == std::string::npos) continue;
            const std::string name = line.substr(include + 10, line.find('"', include + 10) - include - 10);
            EXPECT_NE(std::find(all.begin(), all.end(), name), all.end()) << f.name << " includes " << name;
        }
    }
}

// A family's host code (how its parameters become a grid, shared memory and a workspace) is
// hashed as its templates are: editing the file that declares a family changes its hash and
// no other file's families', and editing the launch code every family shares changes them all.
TEST(FamilySources, TheHostHashFollowsTheFamilysOwnFileAndTheSharedOnes) {
    const std::vector<EmbeddedFile> declaring = {{"one_family.cpp", "int one;\n"}, {"two_family.cpp", "int two;\n"}};
    const std::vector<EmbeddedFile> shared = {{"family.h", "struct Family;\n"}, {"loaded_kernel.cpp", "int launch;\n"}};
    const std::string one = family_host_sources_hash("one_family.cpp", declaring, shared),
                      two = family_host_sources_hash("two_family.cpp", declaring, shared);
    EXPECT_NE(one, two);
    std::vector<EmbeddedFile> one_edited = declaring, header_edited = shared, launch_edited = shared;
    one_edited[0].text = "int one, more;\n";
    header_edited[0].text = "struct Family { int more; };\n";
    launch_edited[1].text = "int launch, more;\n";
    EXPECT_NE(family_host_sources_hash("one_family.cpp", one_edited, shared), one);
    EXPECT_EQ(family_host_sources_hash("two_family.cpp", one_edited, shared), two);
    for (const std::vector<EmbeddedFile>* edited : {&header_edited, &launch_edited}) {
        EXPECT_NE(family_host_sources_hash("one_family.cpp", declaring, *edited), one);
        EXPECT_NE(family_host_sources_hash("two_family.cpp", declaring, *edited), two);
    }
    EXPECT_EQ(family_host_sources_hash("one_family.cpp", declaring, shared), one) << "the same sources hash alike";
    EXPECT_THROW(family_host_sources_hash("three_family.cpp", declaring, shared), Error);
}

// The files of src/families that `text` includes, by base name.
std::vector<std::string> family_includes(const std::string& text) {
    const std::string prefix = "#include \"src/families/";
    std::vector<std::string> names;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0) names.push_back(line.substr(prefix.size(), line.rfind('"') - prefix.size()));
    return names;
}

// Every family names the file that declares it, and that file is compiled in (a new family
// file left out of src/meson.build's family_declaring_files fails here); its host code is
// part of the hash a stored kernel carries. A file of src/families a hashed file includes is
// hashed too, but for a declaring file's own header, which declares only its make function
// (a header that held launch code would go unhashed: list it in shared_launch_files).
TEST(FamilySources, EachFamilysDeclaringFileIsHashedWithItsTemplates) {
    for (const Family& f : all_families()) {
        const char* text = find_embedded(embedded_family_sources(), f.host_source);
        ASSERT_NE(text, nullptr) << f.name << ": '" << f.host_source << "' is not embedded";
        EXPECT_NE(std::string(text).find("f.name = \"" + f.name + "\";"), std::string::npos)
            << f.host_source << " does not declare " << f.name;
        EXPECT_NE(std::string(text).find("f.template_file = \"" + f.template_file + "\";"), std::string::npos)
            << f.host_source << " does not name " << f.template_file;
    }
    std::vector<EmbeddedFile> hashed = embedded_family_sources();
    for (const EmbeddedFile& f : embedded_shared_launch_sources()) hashed.push_back(f);
    int includes = 0;
    for (const EmbeddedFile& f : hashed)
        for (const std::string& included : family_includes(f.text)) {
            ++includes;
            const std::string name = f.name, own_header = name.substr(0, name.rfind('.')) + ".h";
            if (included != own_header) {
                EXPECT_NE(find_embedded(hashed, included), nullptr) << name << " includes " << included << ", which is not hashed";
            }
        }
    EXPECT_GE(includes, 5) << "each declaring file's own header, and family.h from family.cpp and loaded_kernel.h";
    const Family& warptile = find_family("warptile");
    Family declared_elsewhere = warptile;
    declared_elsewhere.host_source = find_family("decode").host_source;
    EXPECT_NE(family_sources_hash(declared_elsewhere), family_sources_hash(warptile));
}

}  // namespace
