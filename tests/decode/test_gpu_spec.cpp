#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "src/util/error.h"
#include "tuner/decode/gpu_spec.h"

using namespace sgemm;

namespace {

std::string fixture(const std::string& name) { return std::string(DECODE_FIXTURES) + "/" + name; }

}  // namespace

TEST(GpuSpec, BuiltinsFoundIgnoringCaseAndPunctuation) {
    EXPECT_EQ(find_builtin_gpu("h100-sxm").name, "H100 SXM");
    EXPECT_EQ(find_builtin_gpu("a100_80gb").name, "A100-80GB");
    EXPECT_EQ(find_builtin_gpu("RTX3090").name, "RTX 3090");
    for (const GpuSpec& gpu : builtin_gpus()) {
        EXPECT_GT(gpu.fp32_tflops, 0) << gpu.name;
        EXPECT_GT(gpu.bandwidth_tbs, 0) << gpu.name;
        EXPECT_GT(gpu.peak_flops(Precision::fp16), gpu.peak_flops(Precision::fp32)) << gpu.name;
        EXPECT_FALSE(gpu.source.empty()) << gpu.name;
    }
}

TEST(GpuSpec, TheH200UsesWhatWasMeasuredHere) {
    const GpuSpec h200 = find_builtin_gpu("H200");
    // Exactly, not within rounding: --json prints these figures to the last digit.
    EXPECT_EQ(h200.peak_flops(Precision::fp32), 66.9e12);
    EXPECT_EQ(h200.bytes_per_s(), 4.29e12);
    EXPECT_NEAR(h200.memory_gib, 150754820096.0 / (1 << 30), 0.05);  // as CUDA reported it there
}

TEST(GpuSpec, AMissingPeakNamesTheField) {
    try {
        find_builtin_gpu("T4").peak_flops(Precision::bf16);
        FAIL() << "a T4 has no bf16 tensor cores";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bf16_tflops"), std::string::npos) << e.what();
    }
}

TEST(GpuSpec, UnknownNamesListTheBuiltins) {
    try {
        gpu_from_name_or_file("B200");
        FAIL() << "an unknown GPU was accepted";
    } catch (const Error& e) {
        for (const GpuSpec& gpu : builtin_gpus())
            EXPECT_NE(std::string(e.what()).find(gpu.name), std::string::npos) << e.what();
    }
}

TEST(GpuSpec, LoadsAJsonFile) {
    const GpuSpec gpu = gpu_from_name_or_file(fixture("gpu_custom.json"));
    EXPECT_EQ(gpu.name, "Test GPU");
    EXPECT_DOUBLE_EQ(gpu.peak_flops(Precision::fp32), 10e12);
    EXPECT_DOUBLE_EQ(gpu.peak_flops(Precision::fp16), 100e12);
    EXPECT_DOUBLE_EQ(gpu.bytes_per_s(), 1e12);
    EXPECT_DOUBLE_EQ(gpu.memory_gib, 12);
    EXPECT_THROW(gpu.peak_flops(Precision::int8), Error);  // not in the file
}

TEST(GpuSpec, ABadJsonFileNamesTheField) {
    const std::pair<const char*, const char*> cases[] = {
        {"gpu_missing_bandwidth.json", "field 'bandwidth_tbs' is missing"},
        {"gpu_string_peak.json", "field 'fp32_tflops' must be a number, not a string (\"10\")"},
        {"gpu_numeric_name.json", "field 'name' must be a string, not a number (4090)"},
        {"gpu_huge_peak.json", "field 'fp32_tflops' must be between 0.001 and 10000 TFLOPS, got 1e+300"},
        // GB/s given for TB/s (an H200's 4,800): the ridge would read 1000 times too low.
        {"gpu_bandwidth_in_gbs.json", "field 'bandwidth_tbs' must be between 0.0001 and 100 TB/s, got 4800"},
        // MiB given for GiB: past any GPU's memory, it would let every step fit.
        {"gpu_memory_in_mib.json", "field 'memory_gib' must be between 0.001 and 10000 GiB, got 81920"},
        {"gpu_string_memory.json", "field 'memory_gib' must be a number, not a string (\"80\")"},
        {"gpu_object_source.json", "field 'source' must be a string, not an object"},
        // A misspelt field would leave its figure unset: memory so, and fit never checked.
        {"gpu_misspelt_memory.json", "field 'memory_gb' is not one this file may hold (name, fp32_tflops, "
                                     "bandwidth_tbs, fp16_tflops, bf16_tflops, int8_tops, memory_gib, source)"},
    };
    for (const auto& [file, problem] : cases) {
        try {
            load_gpu_spec(fixture(file));
            ADD_FAILURE() << file << " was accepted";
        } catch (const Error& e) {
            const std::string text = e.what();
            EXPECT_NE(text.find(file), std::string::npos) << text;
            EXPECT_NE(text.find(problem), std::string::npos) << text;
        }
    }
}

// Where the figures come from: the file's "source" (what --json writes beside them, so that a
// report's gpu object read back keeps the datasheet or measurement it names), else the file.
TEST(GpuSpec, TheFiguresSourceIsTheFilesOwnElseItsPath) {
    EXPECT_EQ(load_gpu_spec(fixture("gpu_custom.json")).source, fixture("gpu_custom.json"));
    EXPECT_EQ(load_gpu_spec(fixture("gpu_with_source.json")).source, "datasheet of the Test GPU, rev 2");
}

// Kept as given: JSON output keeps them, and the tables escape them (decode_cli.sh).
TEST(GpuSpec, ControlCharactersInTheNameAreKept) {
    EXPECT_EQ(load_gpu_spec(fixture("gpu_control_in_name.json")).name, "GPU\x1b[31m");
}

TEST(GpuSpec, AFileIsKnownByItsExtensionInAnyCase) {
    try {
        gpu_from_name_or_file(fixture("no_such_gpu.JSON"));
        FAIL() << "no such GPU file, and no such GPU";
    } catch (const Error& e) {
        // Read as a file (not looked up as a GPU's name), which is missing.
        EXPECT_NE(std::string(e.what()).find("no_such_gpu.JSON: cannot open the file"), std::string::npos) << e.what();
    }
}

TEST(Precision, ParsesTheFourFormats) {
    for (const char* name : {"fp32", "fp16", "bf16", "int8"}) EXPECT_EQ(to_string(parse_precision(name)), name);
    EXPECT_EQ(parse_precision("FP16"), Precision::fp16);
    EXPECT_THROW(parse_precision("fp8"), Error);
    EXPECT_EQ(bytes_per_element(Precision::int8), 1);
    EXPECT_EQ(activation_precision(Precision::int8), Precision::fp16);
}
