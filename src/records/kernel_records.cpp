#include "src/records/kernel_records.h"

#include "src/cuda/library.h"
#include "src/families/registry.h"

namespace sgemm {

DeviceFingerprint fingerprint_of(const DeviceInfo& device) {
    DeviceFingerprint f;
    f.gpu_name = device.name;
    f.cc_major = device.cc_major;
    f.cc_minor = device.cc_minor;
    f.sm_count = device.sm_count;
    f.memory_bytes = static_cast<std::int64_t>(device.global_memory_bytes);
    f.driver_version = device.driver_version;
    f.runtime_version = device.runtime_version;
    f.nvrtc_version = nvrtc_version();
    return f;
}

const std::vector<std::string>& all_family_sources_hashes() {
    // Asked for every row an import, merge or verify judges: the families are fixed in a build.
    static const std::vector<std::string> hashes = [] {
        std::vector<std::string> all;
        for (const Family& f : all_families()) all.push_back(family_sources_hash(f));
        return all;
    }();
    return hashes;
}

KernelRef kernel_ref(const Family& family, const ParamValues& values) {
    return KernelRef{family.name, values, family.describe(values), family_sources_hash(family)};
}

const Family* family_of(const KernelRef& kernel) {
    for (const Family& f : all_families())
        if (f.name == kernel.family) return &f;
    return nullptr;
}

bool built_from_these_sources(const KernelRef& kernel) {
    const Family* family = family_of(kernel);
    return family && kernel.template_hash == family_sources_hash(*family);
}

std::string size_past_kernels(int M, int N, int K) {
    for (const auto& [name, size] : {std::pair<const char*, int>{"M", M}, {"N", N}, {"K", K}})
        if (size > kLargestKernelDimension)
            return std::string(name) + "=" + std::to_string(size) +
                   " is past 2^31 - 4096, the largest size the kernels' 32-bit tile counts take";
    return "";
}

std::string kernel_cannot_run(const KernelRef& kernel, const ShapeKey& shape, Arch arch) {
    if (kernel.is_cublas()) return "";
    const Family* family = family_of(kernel);
    if (!family) return "this build has no kernel family '" + kernel.family + "'";
    if (std::string why = size_past_kernels(shape.M, shape.N, shape.K); !why.empty()) return why;
    if (kernel.params.size() != family->params.size())
        return "it has " + std::to_string(kernel.params.size()) + " parameters; family " + family->name + " takes " +
               std::to_string(family->params.size());
    if (const int alignment = family->required_alignment(kernel.params); alignment > shape.alignment)
        return "it needs " + std::to_string(alignment) + "-byte alignment";
    if (!family->reads_transposes(kernel.params, shape.trans_a, shape.trans_b))
        return "it does not read " + shape.transposes();
    return family->unsupported_shape_reason(kernel.params, shape.M, shape.N, shape.K, arch);
}

bool kernel_sums_with_atomics(const KernelRef& kernel) {
    const Family* family = family_of(kernel);
    return family && kernel.params.size() == family->params.size() && family->sums_with_atomics(kernel.params);
}

std::string winner_unusable(const Winner& w, Arch arch) {
    if (w.kernel.is_cublas()) return "";
    const Family* family = family_of(w.kernel);
    if (!family) return "this build has no kernel family '" + w.kernel.family + "'";
    if (!built_from_these_sources(w.kernel)) return "tuned with other kernel sources (templates or family code) than this build's";
    return kernel_cannot_run(w.kernel, w.shape, arch);
}

namespace {

// The cache key that this build's sources give `w`'s family and parameters on `device`
// (whatever sources its row names), or empty where its family is unknown or cannot run its shape.
std::string key_of_these_sources(const Winner& w, const DeviceFingerprint& device) {
    const Family* family = family_of(w.kernel);
    const Arch arch{device.sm()};
    if (!family || !kernel_cannot_run(w.kernel, w.shape, arch).empty()) return "";
    return kernel_cache_key(*family, w.kernel.params, arch, KernelBuild::product, device.nvrtc_version);
}

}  // namespace

std::string own_binary_key(const Winner& w, const DeviceFingerprint& device) {
    return built_from_these_sources(w.kernel) ? key_of_these_sources(w, device) : "";
}

std::string edited_sources_hash(const Winner& w, const DeviceFingerprint& device) {
    if (w.kernel.is_cublas() || built_from_these_sources(w.kernel)) return "";
    if (const std::string ours = key_of_these_sources(w, device); ours.empty() || ours != w.binary_key) return "";
    return "its sources hash " + w.kernel.template_hash + " is not this build's, " +
           family_sources_hash(*family_of(w.kernel)) + ", but its binary " + w.binary_key +
           " is this build's compile of it, which only this build's sources give (edited?)";
}

std::string binary_mismatch(const Winner& w, const DeviceFingerprint& device) {
    const std::string own = own_binary_key(w, device);
    if (own.empty() || own == w.binary_key) return "";
    return "its binary " + w.binary_key + " is not " + family_of(w.kernel)->name_expression(w.kernel.params) +
           " for " + Arch{device.sm()}.name() + " with NVRTC " + device.nvrtc_version + " (that is " + own + ")";
}

std::string binary_load_failure(const Binary& binary) {
    try {
        const Library library(binary.cubin);
        library.kernel(binary.lowered_name);
        if (const std::string second = from_binary(binary).second_lowered_name; !second.empty()) library.kernel(second);
        return std::string();
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
}

Binary to_binary(const CompiledKernel& compiled, const KernelRef& kernel) {
    Binary b;
    b.cache_key = compiled.cache_key;
    b.kernel = kernel;
    b.arch = compiled.arch.sm;
    b.nvrtc_version = nvrtc_version();
    b.lowered_name = compiled.lowered_name;
    b.cubin = compiled.cubin;
    b.cubin_checksum = cubin_checksum(compiled.cubin);  // of the cubin as NVRTC gave it
    b.registers = compiled.ptxas.registers;
    b.shared_bytes = compiled.ptxas.shared_bytes;
    b.stack_bytes = compiled.ptxas.stack_bytes;
    b.spill_store_bytes = compiled.ptxas.spill_store_bytes;
    b.spill_load_bytes = compiled.ptxas.spill_load_bytes;
    b.compile_ms = compiled.compile_ms;
    return b;
}

CompiledKernel from_binary(const Binary& b) {
    CompiledKernel k;
    k.family = b.kernel.family;
    k.values = b.kernel.params;
    k.arch = Arch{b.arch};
    if (const Family* f = family_of(b.kernel)) k.name_expression = f->name_expression(b.kernel.params);
    k.lowered_name = b.lowered_name;
    if (const Family* f = family_of(b.kernel)) k.second_lowered_name = f->second_symbol(b.kernel.params, b.lowered_name);
    k.cache_key = b.cache_key;
    k.cubin = b.cubin;
    k.compile_ms = b.compile_ms;
    k.ptxas.found = b.registers > 0;
    k.ptxas.registers = b.registers;
    k.ptxas.shared_bytes = b.shared_bytes;
    k.ptxas.stack_bytes = b.stack_bytes;
    k.ptxas.spill_store_bytes = b.spill_store_bytes;
    k.ptxas.spill_load_bytes = b.spill_load_bytes;
    return k;
}

}  // namespace sgemm
