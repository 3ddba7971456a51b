// The kernels a handle may launch, loaded on the current device at create: every winner's
// kernel from its cached binary, and the built-in kernels (one per transposes) when the
// fallback policy asks for them. NVRTC runs only for a binary that is missing from the cache
// or unusable, all such compiles at once, and each is counted and reported.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "db/store.h"
#include "src/dispatch/catalog.h"
#include "src/jit/loaded_kernel.h"

namespace sgemm {

class KernelSet {
public:
    // `store` (may be null) is searched for the built-in kernels' binaries. Throws
    // StatusError: COMPILE_ERROR when a compile is needed and the GPU is no compile target,
    // or when NVRTC fails (each failed compile named, a line each); CUDA_ERROR when a load
    // fails. Every compile runs before any load.
    KernelSet(const Catalog& catalog, bool with_builtin, TuningStore* store);

    // The loaded kernel of `kernel` (its family and parameters), else one whose binary serves
    // it (LoadedKernel::serves: a winner's kernel re-split by decide), or nullptr.
    const LoadedKernel* find(const KernelRef& kernel) const;

    int loaded() const { return static_cast<int>(kernels_.size()); }
    int compiled() const { return static_cast<int>(compiled_.size()); }
    double compile_ms() const { return compile_ms_; }
    // "warptile BM=...: missing from the binary cache", one per compile.
    const std::vector<std::string>& compiled_notes() const { return compiled_; }

private:
    std::map<std::pair<std::string, ParamValues>, std::unique_ptr<LoadedKernel>> kernels_;
    std::vector<std::string> compiled_;
    double compile_ms_ = 0;
};

}  // namespace sgemm
