#include "tuner/decode/gpu_spec.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <optional>

#include "src/util/error.h"
#include "tuner/decode/json_fields.h"
#include "src/util/text.h"

namespace sgemm {

const std::vector<GpuSpec>& builtin_gpus() {
    // {name, fp32, fp16, bf16, int8, TB/s, memory GiB, source}. Memory as CUDA reports it
    // (totalGlobalMem), under the datasheet's "GB": 15,843,721,216 bytes on a T4 (ECC on,
    // deviceQuery) and 150,754,820,096 on this project's H200. For the others, the total
    // nvidia-smi reports (81920, 24576 and 81559 MiB), which is the H200's CUDA figure too;
    // on a GPU with ECC on CUDA's may be up to 2% less, as on the T4 (15360 MiB there).
    static const std::vector<GpuSpec> gpus = {
        {"T4", 8.1, 65, 0, 130, 0.320, 14.76, "NVIDIA T4 datasheet (Turing: no bf16)"},
        {"A100-80GB", 19.5, 312, 312, 624, 2.039, 80, "NVIDIA A100 datasheet, 80GB SXM"},
        {"RTX 3090", 35.6, 71, 71, 284, 0.936, 24,
         "NVIDIA Ampere GA102 whitepaper (tensor peaks with fp32 accumulate)"},
        {"H100 SXM", 67, 989.4, 989.4, 1978.9, 3.35, 79.6, "NVIDIA H100 datasheet, SXM5"},
        {"H200", 66.9, 989.4, 989.4, 1978.9, 4.29, 140.4,
         "fp32 FFMA peak (1980 MHz), device-copy bandwidth and memory measured on this project's H200; "
         "tensor peaks from the NVIDIA H200 datasheet (datasheet bandwidth 4.8 TB/s)"},
    };
    return gpus;
}

namespace {

std::string squeeze(const std::string& text) {
    std::string out;
    for (unsigned char c : text)
        if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
    return out;
}

}  // namespace

double GpuSpec::peak_flops(Precision precision) const {
    const auto need = [&](double tflops, const char* field) {
        if (tflops <= 0) throw Error("GPU '" + printable(name) + "' has no " + to_string(precision) + " peak (" + field + ")");
        return per_second(tflops);
    };
    switch (precision) {
        case Precision::fp32: return need(fp32_tflops, "fp32_tflops");
        case Precision::fp16: return need(fp16_tflops, "fp16_tflops");
        case Precision::bf16: return need(bf16_tflops, "bf16_tflops");
        case Precision::int8: return need(int8_tops, "int8_tops");
    }
    return 0;
}

GpuSpec find_builtin_gpu(const std::string& name) {
    std::string names;
    for (const GpuSpec& gpu : builtin_gpus()) {
        if (squeeze(gpu.name) == squeeze(name)) return gpu;
        names += (names.empty() ? "" : ", ") + gpu.name;
    }
    throw Error("unknown GPU " + single_quoted(name) + ": built-in GPUs are " + names + " (or give a JSON file: a .json name, or a path with a /)");
}

namespace {

// A peak from 1 GFLOPS to 100 PFLOPS (fp32's to 10 PFLOPS), a bandwidth from 100 MB/s to
// 100 TB/s: outside, a figure is a typo or a unit slip, and the roofline's ratios would be
// wrong by a factor of 1000 or overflow to inf or NaN. The upper bounds sit far above
// today's GPUs (an H200: 67 fp32 and 989 fp16 TFLOPS, 4.8 TB/s) yet below the same figures
// given in GFLOPS or GB/s (66,900, 989,000 and 4,800).
constexpr double kMinTflops = 1e-3, kMaxTflops = 1e5, kMaxFp32Tflops = 1e4, kMinTbs = 1e-4, kMaxTbs = 1e2,
                 kMinGib = 1e-3, kMaxGib = 1e4;

double figure(const JsonFields& json, const std::string& key, double low, double high, const char* unit) {
    const double value = json.positive_number(key);
    if (value < low || value > high) {
        char range[96];
        // The value as the file gives it (shortest round trip): %g made 1000001 read "1e+06".
        char given[32];
        *std::to_chars(given, given + sizeof given - 1, value, std::chars_format::general).ptr = '\0';
        std::snprintf(range, sizeof range, "must be between %g and %g %s, got %s", low, high, unit, given);
        json.fail(key, range);
    }
    return value;
}

std::optional<double> optional_figure(const JsonFields& json, const std::string& key, double low, double high,
                                      const char* unit) {
    if (!json.has(key)) return std::nullopt;
    return figure(json, key, low, high, unit);
}

}  // namespace

GpuSpec load_gpu_spec(const std::string& path) {
    const JsonFields json = JsonFields::load(path);
    // "source" is what sgemm-roofline --json writes beside the figures: its gpu object reads back.
    json.refuse_fields_other_than({"name", "fp32_tflops", "bandwidth_tbs", "fp16_tflops", "bf16_tflops", "int8_tops",
                                   "memory_gib", "source"});
    GpuSpec gpu;
    gpu.name = json.text("name").value_or("");  // as given: printers escape control characters
    if (gpu.name.empty()) json.fail("name", "is missing or empty");
    gpu.fp32_tflops = figure(json, "fp32_tflops", kMinTflops, kMaxFp32Tflops, "TFLOPS");
    gpu.bandwidth_tbs = figure(json, "bandwidth_tbs", kMinTbs, kMaxTbs, "TB/s");
    gpu.fp16_tflops = optional_figure(json, "fp16_tflops", kMinTflops, kMaxTflops, "TFLOPS").value_or(0);
    gpu.bf16_tflops = optional_figure(json, "bf16_tflops", kMinTflops, kMaxTflops, "TFLOPS").value_or(0);
    gpu.int8_tops = optional_figure(json, "int8_tops", kMinTflops, kMaxTflops, "TOPS").value_or(0);
    gpu.memory_gib = optional_figure(json, "memory_gib", kMinGib, kMaxGib, "GiB").value_or(0);
    // The figures' own provenance where the file gives it (a --json report's gpu object:
    // "measured on this project's H200"), which the path they were last read from would hide;
    // else the file ("standard input" for "-").
    const std::string given = json.text("source").value_or("");
    gpu.source = given.empty() ? json.source() : given;
    return gpu;
}

GpuSpec gpu_from_name_or_file(const std::string& text) {
    // A file by its extension, in any case (my_gpu.JSON too), or by a / in its path, which no
    // built-in GPU's name holds (./my_gpu, a pipe such as <(...) or /dev/stdin), or "-", standard input.
    const std::string suffix = ".json";
    const bool json_name = text.size() >= suffix.size() && lower_case(text.substr(text.size() - suffix.size())) == suffix;
    return json_name || text == "-" || text.find('/') != std::string::npos ? load_gpu_spec(text) : find_builtin_gpu(text);
}

}  // namespace sgemm
