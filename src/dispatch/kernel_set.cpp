#include "src/dispatch/kernel_set.h"

#include <chrono>
#include <optional>

#include "db/verify.h"
#include "src/dispatch/status_error.h"
#include "src/families/registry.h"
#include "src/jit/arch.h"
#include "src/records/kernel_records.h"
#include "src/util/parallel_for.h"

namespace sgemm {
namespace {

// A kernel to load, with its binary or why it has to be compiled.
struct Wanted {
    KernelRef kernel;
    std::optional<Binary> binary;
    std::string why_compile;
    CompiledKernel compiled;
};

}  // namespace

KernelSet::KernelSet(const Catalog& catalog, bool with_builtin, TuningStore* store) {
    const Arch arch{catalog.device.sm()};
    std::map<std::pair<std::string, ParamValues>, Wanted> wanted;
    for (const Winner& w : catalog.winners) {
        if (w.kernel.is_cublas()) continue;
        Wanted& x = wanted[{w.kernel.family, w.kernel.params}];
        x.kernel = w.kernel;
        if (const auto b = catalog.binaries.find(w.binary_key); b != catalog.binaries.end())
            x.binary = b->second;
        else
            x.why_compile = catalog.unusable_binaries.at(w.binary_key);
    }
    for (int t = 0; with_builtin && t < 4; ++t) {  // NN, NT, TN, TT
        const KernelRef builtin = builtin_kernel(t / 2, t % 2);
        Wanted& x = wanted[{builtin.family, builtin.params}];
        x.kernel = builtin;
        const std::string key = kernel_cache_key(find_family(builtin.family), builtin.params, arch);
        x.why_compile = "the built-in kernel is not in the binary cache";
        try {
            if (std::optional<Binary> b = store ? store->find_binary(key) : std::nullopt;
                b && binary_problem(*b, catalog.device).empty())
                x.binary = std::move(b);
        } catch (const Error& e) {
            // A row the cache cannot read (damaged, or the file locked now) costs a compile,
            // not the handle: the kernel's source is in the library.
            x.why_compile = std::string("the binary cache could not be read: ") + e.what();
        }
    }

    // Compiles run in parallel, one a usable CPU: NVRTC takes a second or more, and some
    // 45 MB, per kernel, so a thread per kernel would crowd a small container.
    const auto start = std::chrono::steady_clock::now();
    std::vector<Wanted*> compiles;
    for (auto& [key, x] : wanted)
        if (!x.binary) compiles.push_back(&x);
    // A GPU newer than this NVRTC (or older than the families): said in these words, not
    // in NVRTC's ("invalid value for --gpu-architecture").
    if (!compiles.empty())
        if (const std::string why = unsupported_arch_reason(arch); !why.empty())
            throw StatusError(SGEMM_DISPATCH_COMPILE_ERROR, "compiling " + compiles.front()->kernel.description +
                                                                " (" + compiles.front()->why_compile + "): " + why);
    std::vector<std::string> failures(compiles.size());  // each compile's, so that all are said
    parallel_for(compiles.size(), [&](std::size_t first, std::size_t end) {
        for (std::size_t i = first; i < end; ++i) {
            Wanted& x = *compiles[i];
            try {
                x.compiled = compile_kernel(*family_of(x.kernel), x.kernel.params, arch);
            } catch (const std::exception& e) {
                failures[i] = "compiling " + x.kernel.description + " (" + x.why_compile + "): " + e.what();
            }
        }
    });
    compile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string compile_error;
    for (std::size_t i = 0; i < compiles.size(); ++i) {
        if (failures[i].empty())
            compiled_.push_back(compiles[i]->kernel.description + ": " + compiles[i]->why_compile);
        else
            compile_error += (compile_error.empty() ? "" : "\n") + failures[i];
    }
    if (!compile_error.empty()) throw StatusError(SGEMM_DISPATCH_COMPILE_ERROR, compile_error);

    for (auto& [key, x] : wanted) {
        CompiledKernel k = x.binary ? from_binary(*x.binary) : std::move(x.compiled);
        k.values = x.kernel.params;  // a binary serves the split counts on its side of 1
        try {
            kernels_[key] = std::make_unique<LoadedKernel>(*family_of(x.kernel), k);
        } catch (const Error& e) {
            throw StatusError(SGEMM_DISPATCH_CUDA_ERROR, "loading " + x.kernel.description + ": " + e.what());
        }
    }
}

const LoadedKernel* KernelSet::find(const KernelRef& kernel) const {
    if (const auto it = kernels_.find({kernel.family, kernel.params}); it != kernels_.end()) return it->second.get();
    for (const auto& [key, loaded] : kernels_)
        if (key.first == kernel.family && loaded->serves(kernel.params)) return loaded.get();
    return nullptr;
}

}  // namespace sgemm
