// Compiling candidates through the database's binary cache, in parallel.
//
// Candidates that differ only in their split count (on the same side of 1) share a binary,
// so work is keyed by the cache key. Keys found in the database are not compiled again
// unless their cubin is damaged (db/verify.h's cubin_problem); the rest are compiled on a
// pool of `jobs` threads (NVRTC is thread-safe for separate programs) and stored, a damaged
// row replaced. The database is only touched from the calling thread.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "src/jit/compiler.h"
#include "tuner/candidates.h"

#pragma once

namespace sgemm {

struct BuiltKernel {
    std::optional<CompiledKernel> kernel;  // absent when compiling failed
    std::string error;                     // why, when it failed
};

class KernelCache {
public:
    // `store` may be null (dry runs): then nothing is looked up or stored. `stop`, when given,
    // is asked before each compile: once it says yes, build() starts no more (a compile can
    // take seconds, and a batch hundreds of them).
    KernelCache(TuningStore* store, Arch arch, int jobs, std::function<bool()> stop = {})
        : store_(store), arch_(arch), jobs_(jobs), stop_(std::move(stop)) {}

    // Builds every candidate's binary; `progress(done, total)` is called as keys finish. After
    // a stop, the candidates it did not compile are not built (get() throws for them); the
    // ones it compiled are stored. A candidate that does not compile is built as its error; a
    // failure of NVRTC itself (NvrtcError) stops the compiles, and is thrown after those
    // compiled are stored.
    void build(const std::vector<Candidate>& candidates, const std::function<void(int, int)>& progress = {});
    // The built kernel of a candidate, after build(); its values are the candidate's.
    BuiltKernel get(const Candidate& candidate) const;

    int compiled() const { return compiled_; }
    int cache_hits() const { return cache_hits_; }

private:
    TuningStore* store_;
    Arch arch_;
    int jobs_;
    std::function<bool()> stop_;
    std::map<std::string, BuiltKernel> by_key_;
    int compiled_ = 0, cache_hits_ = 0;
};

}  // namespace sgemm
