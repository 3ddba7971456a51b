#include "tuner/decode/gpu_spec.h"

#include <cctype>

#include "src/util/error.h"
#include "tuner/decode/json_fields.h"

namespace sgemm {

const std::vector<GpuSpec>& builtin_gpus() {
    // {name, fp32, fp16, bf16, int8, TB/s, source}
    static const std::vector<GpuSpec> gpus = {
        {"T4", 8.1, 65, 0, 130, 0.320, "NVIDIA T4 datasheet (Turing: no bf16)"},
        {"A100-80GB", 19.5, 312, 312, 624, 2.039, "NVIDIA A100 datasheet, 80GB SXM"},
        {"RTX 3090", 35.6, 71, 71, 284, 0.936,
         "NVIDIA Ampere GA102 whitepaper (tensor peaks with fp32 accumulate)"},
        {"H100 SXM", 67, 989.4, 989.4, 1978.9, 3.35, "NVIDIA H100 datasheet, SXM5"},
        {"H200", 66.9, 989.4, 989.4, 1978.9, 4.29,
         "fp32 FFMA peak (1980 MHz) and device-copy bandwidth measured on this project's H200; "
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
        if (tflops <= 0) throw Error("GPU '" + name + "' has no " + to_string(precision) + " peak (" + field + ")");
        return tflops * 1e12;
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
    throw Error("unknown GPU '" + name + "': built-in GPUs are " + names + " (or give a .json file)");
}

GpuSpec load_gpu_spec(const std::string& path) {
    const JsonFields json = JsonFields::load(path);
    GpuSpec gpu;
    gpu.name = json.text("name").value_or("");
    if (gpu.name.empty()) json.fail("name", "is missing or empty");
    gpu.fp32_tflops = json.positive_number("fp32_tflops");
    gpu.bandwidth_tbs = json.positive_number("bandwidth_tbs");
    gpu.fp16_tflops = json.optional_positive_number("fp16_tflops").value_or(0);
    gpu.bf16_tflops = json.optional_positive_number("bf16_tflops").value_or(0);
    gpu.int8_tops = json.optional_positive_number("int8_tops").value_or(0);
    gpu.source = path;
    return gpu;
}

GpuSpec gpu_from_name_or_file(const std::string& text) {
    const std::string suffix = ".json";
    const bool file = text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
    return file ? load_gpu_spec(text) : find_builtin_gpu(text);
}

}  // namespace sgemm
