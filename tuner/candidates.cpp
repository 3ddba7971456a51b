#include "tuner/candidates.h"

#include <algorithm>

#include "src/families/registry.h"
#include "src/records/kernel_records.h"

namespace sgemm {

std::vector<std::string> default_families() {
    static const std::vector<std::string> never_win = {"naive", "smem", "blocktile"};
    std::vector<std::string> out;
    for (const Family& f : all_families())
        if (std::find(never_win.begin(), never_win.end(), f.name) == never_win.end()) out.push_back(f.name);
    return out;
}

std::vector<Candidate> enumerate_candidates(const ShapeKey& shape, Arch arch, const std::vector<std::string>& families,
                                            bool atomics_allowed) {
    std::vector<const Family*> chosen;
    for (const std::string& name : families.empty() ? default_families() : families)
        chosen.push_back(&find_family(name));
    if (!size_past_kernels(shape.M, shape.N, shape.K).empty()) return {};  // cuBLAS alone serves it
    // Staging (warptile's ALIGNED = 2) pays only for operands that are not 16-byte aligned or
    // an N that is no multiple of 4, and leaves the main kernel nothing to do below N = 4.
    const bool staging_may_pay = shape.N >= 4 && (shape.alignment < 16 || shape.N % 4 != 0);
    std::vector<Candidate> out;
    for (const Family* f : chosen)
        for (const ParamValues& v : f->valid_configs(arch))
            if ((atomics_allowed || !f->sums_with_atomics(v)) && f->required_alignment(v) <= shape.alignment &&
                (staging_may_pay || !f->stages_operands(v)) &&
                f->reads_transposes(v, shape.trans_a, shape.trans_b) &&
                f->unsupported_shape_reason(v, shape.M, shape.N, shape.K, arch).empty())
                out.push_back({f, v});
    return out;
}

std::string spills_reason(const PtxasInfo& ptxas) {
    if (!ptxas.spills()) return "";
    return "spills to local memory (" + std::to_string(ptxas.spill_store_bytes) + " B stored, " +
           std::to_string(ptxas.spill_load_bytes) + " B loaded)";
}

}  // namespace sgemm
