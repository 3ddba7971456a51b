// What dispatch knows before it touches the GPU: the winners of one device that this build
// can use, their cached binaries, and the decision for a shape key (db/selection.h's rule,
// then the fallback policy). No CUDA here, so the tests check decisions on hand-built
// databases without a GPU.
#pragma once
#include <sgemm/dispatch.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/selection.h"
#include "db/store.h"
#include "src/families/family.h"
#include "src/jit/arch.h"

namespace sgemm {

// A winner dispatch leaves out, and why.
struct SkippedWinner {
    Winner winner;
    std::string why;
    std::string describe() const { return winner.shape.to_string() + " " + winner.kernel.description + ": " + why; }
};

// A winner whose slices add into C with float atomics, and what a deterministic handle runs
// instead (load_catalog's `deterministic`): `winners` holds the stand-in in its place.
struct DeterministicStandIn {
    Winner atomic;
    KernelRef runs;                // the stand-in's kernel: a kernel of this library, or cuBLAS
    std::optional<double> ms;      // its measured time; none for the twin, which was not timed
    std::string how;               // how it was chosen, and what its time means
    std::string describe() const {
        return atomic.shape.to_string() + " " + atomic.kernel.description + " adds its slices into C with float atomics; "
               "options.deterministic runs " + runs.description + " instead: " + how;
    }
};

struct Catalog {
    DeviceFingerprint device;
    std::vector<Winner> winners;              // the device's winners this build can launch
    std::vector<SkippedWinner> skipped;       // the others
    std::vector<DeterministicStandIn> stand_ins;  // atomic winners a deterministic catalog replaced
    std::map<std::string, Binary> binaries;   // usable cached binaries of the winners, by cache key
    std::map<std::string, std::string> unusable_binaries;  // cache key -> why it must be compiled again
};

// The catalog of `device` in `store`. Rows of every other device (another GPU, driver, CUDA,
// NVRTC or library version) are never read. A winner is skipped when this build cannot run
// its kernel at its own shape (winner_unusable): an unknown family, other kernel sources
// than this build's (the stored geometry would not match the code), or a kernel_cannot_run
// reason; or when its own binary is not in the cache and this build cannot compile it (a
// configuration outside its family's space, as an edited row may hold): create would fail.
// With `deterministic` (sgemm_dispatch_options_t::deterministic), a winner whose split-K
// slices add into C with float atomics is replaced by a stand-in that sums them in a fixed
// order: the fastest valid measurement of its shape whose kernel adds no atomics and this
// build can launch (cuBLAS when cuBLAS was faster), else its deterministic_twin; its binary
// comes from the cache (the tuner caches every kernel it compiles) or is compiled at create.
// A winner without either is skipped. Winners of the other precision are not read: a handle
// serves one precision (sgemm_dispatch_options_t::precision), and a tf32 winner would
// otherwise size its workspaces and may make it create cuBLAS handles it never uses.
Catalog load_catalog(TuningStore& store, const DeviceFingerprint& device, GemmPrecision precision,
                     bool deterministic = false);

// The same tiles and split count as `kernel`, whose slices add into C with atomics, with the
// slices summed in a fixed order instead: by the sum pass, else by the last block of each
// tile; empty when neither is valid on `arch`. The stand-in of last resort, for a database
// that holds winners without their measurements (an import): on the H200 gate_up's batch-32
// twin took 13% longer than the fastest kernel without atomics that its tune measured
// (docs/RESULTS.md, thirty-seventh session).
std::optional<KernelRef> deterministic_twin(const KernelRef& kernel, Arch arch);

// The workspace each stream gets (split-K partials, a stream-K tail's, staged operands): what
// every winner needs at its own shape and alignment class, and each split-K winner at every M
// the nearest rule can give it at its own N and K (largest_m_served), rounded up to 256
// bytes. decide()
// is asked with it, by dispatch and by `sgemm-db explain`.
std::size_t workspace_bytes_needed(const Catalog& catalog);

// The built-in default kernel for a call's transposes: warptile at its defaults, no split-K.
KernelRef builtin_kernel(bool trans_a, bool trans_b);

// How a call is served.
enum class Route {
    Kernel,   // the selected winner's kernel
    Cublas,   // cuBLAS: a cuBLAS winner, or the cuBLAS fallback
    Builtin,  // the built-in default kernel (fallback)
    Refuse,   // SGEMM_DISPATCH_NO_KERNEL (fallback policy ERROR)
};

struct Decision {
    Selection selection;  // exact, nearest or fallback, with the winner and the reason
    Route route = Route::Refuse;
    // What runs: the winner's kernel (perhaps re-split, see decide), cuBLAS or the built-in one.
    KernelRef kernel;
    std::string reason;   // the selection's reason, then what the fallback policy did
};

// The decision for `key`. A nearest winner is passed over when its kernel cannot run the
// shape (kernel_cannot_run) or would need more split-K workspace than `workspace_bytes`,
// what each stream holds, even with fewer slices. Its binary serves every split count above 1,
// so a winner whose partials at the call's shape would overflow the workspace runs with the
// most slices of its family's list that fit (the workspace is sized for the winners' own
// shapes, and a wider call of a partly tuned model would otherwise lose the tuned tile), as
// long as that launches at least as many blocks as the winner does at its own shape and
// can run the call's shape (fewer slices may need more shared memory).
Decision decide(const Catalog& catalog, const ShapeKey& key, sgemm_dispatch_fallback_t fallback, Arch arch,
                std::size_t workspace_bytes);

// What a staging binary (Family::stages_operands) launches for a call of `key`, for explain:
// its staging kernel copies operands only below alignment class 16 and computes C's last
// columns only where N mod 4 > 0, and is not launched where it would do neither; below N = 4
// no main kernel follows it. `main_launch` describes the main kernel.
std::string staged_launch(const Family& family, const ParamValues& values, const ShapeKey& key, int sms,
                          const std::string& main_launch);

}  // namespace sgemm
