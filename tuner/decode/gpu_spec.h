// A GPU as the roofline sees it: peak arithmetic per number format and memory bandwidth.
// Built-ins use dense (not sparse) datasheet peaks unless measured here; a JSON file gives
// any other GPU.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "tuner/decode/precision.h"

namespace sgemm {

struct GpuSpec {
    std::string name;  // as given, control characters too: printers escape them
    double fp32_tflops = 0;    // FFMA on the CUDA cores
    double fp16_tflops = 0;    // tensor cores, fp32 accumulate; 0 when unknown or absent
    double bf16_tflops = 0;
    double int8_tops = 0;
    double bandwidth_tbs = 0;  // DRAM, TB/s
    // Device memory in GiB as CUDA reports it (totalGlobalMem / 2^30), not the datasheet's
    // rounded "GB"; 0 when unknown, and then no step is checked against it.
    double memory_gib = 0;
    std::string source;

    // FLOP/s (or OP/s for int8) for math in `precision`; an Error naming the JSON field when
    // the spec has no such peak (a T4 has no bf16). Both figures are whole numbers per second,
    // as the datasheet's decimals mean them: 66.9 * 1e12 is 66900000000000.01 in doubles,
    // which --json printed as such.
    double peak_flops(Precision precision) const;
    double bytes_per_s() const { return per_second(bandwidth_tbs); }

    // A figure in tera-units as a whole number per second.
    static double per_second(double tera) { return std::round(tera * 1e12); }
};

const std::vector<GpuSpec>& builtin_gpus();
// Matched ignoring case, spaces and punctuation ("h100-sxm" finds "H100 SXM"); unknown: an
// Error listing the names.
GpuSpec find_builtin_gpu(const std::string& name);

// JSON: {"name", "fp32_tflops", "bandwidth_tbs"} required; "fp16_tflops", "bf16_tflops",
// "int8_tops" optional (needed only for that --dtype), "memory_gib" optional. Errors name the
// file and the field.
GpuSpec load_gpu_spec(const std::string& path);

// `text` ending in .json is a file, anything else a built-in name.
GpuSpec gpu_from_name_or_file(const std::string& text);

}  // namespace sgemm
