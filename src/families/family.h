// A kernel family is data plus one template: the template's parameters and the values
// each may take, the constraints that make a configuration valid, the launch geometry,
// and what the kernels need of their operands. The tuner searches this space; the JIT
// compiles points of it; dispatch launches them.
#pragma once
#include <vector_types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/jit/arch.h"

namespace sgemm {

struct ParamSpec {
    // As in the template, e.g. "BM". It is part of every stored kernel's description
    // (Family::describe), which sgemm-db checks against the family on import, merge and
    // verify. family_sources_hash(family) covers the family's declaring file (host_source),
    // so renaming a parameter there makes earlier winners another build's, not edited rows.
    std::string name;
    std::vector<int> values;  // the values the tuner may try
    // The split-K count: it shapes the grid, and the template receives only whether it
    // exceeds 1 (a bool), so configurations differing only in it share one binary on each
    // side of 1. Binaries that never split carry no split-K code: compiled in but unused,
    // it cost the H200's non-split warptile kernels 3-6% (ptxas allocated and scheduled
    // the whole kernel around it).
    bool split_count = false;
    // The stream-K switch (warptile's SK): not a template argument. With 1 the binary also
    // holds Family::tail_kernel, and a launch whose tiles leave its last wave part empty
    // gives those tiles to it (stream_k_split).
    bool stream_k = false;
    // Groups of warps that split each tile's k inside a block (warptile's WK): another way
    // to spread k, which trades against the split count. The tuner's final sweep times every
    // group count of its fastest tiles with every split count (tuner/search.h). Decode's KW
    // is not marked: its 7 values would make 70 candidates a tile where WK's 2 make 12.
    bool k_groups = false;
    // The aligned-operands switch (warptile's ALIGNED): with 1 the binary assumes that its
    // 16-byte accesses are legal, with no fallback for misaligned operands, so it serves
    // only calls of alignment class 16 (Family::required_alignment). With 2 it makes them
    // legal, for calls of any class: Family::stage_kernel first copies the operands that
    // would be misaligned into the workspace.
    bool aligned_only = false;
    // How a split launch sums its slices (SUM_PASS, warptile's and decode's; the values are
    // templates/sgemm_common.cuh's SGEMM_SUM_*): 0 in the kernel, 1 in a second kernel of
    // the binary (Family::sum_pass_kernel), 2 (warptile only) by float atomics into C, whose
    // results vary from run to run in the last bits, 3 (warptile only) by the slices of a
    // tile adding into C in turn, in slice order. Another way to finish the spread of k,
    // so the tuner's final sweep crosses it with the split count.
    bool sum_pass = false;
};

// How a launch divides its tiles between the main kernel and the stream-K tail.
struct StreamKSplit {
    unsigned main_blocks = 0;  // the main kernel's grid.x: the first tiles, in whole waves
    unsigned tail_blocks = 0;  // the tail's blocks, two per SM; 0: no tail
};

// Tiles of `tile` covering `extent`, in 64 bits: for any int extent, where int arithmetic
// would overflow near 2^31.
inline long long tiles_along(long long extent, long long tile) { return (extent + tile - 1) / tile; }

// A count of blocks as dim3 holds it: exact below 2^31; past that, 2^32 - 1, a count no launch
// takes (unsupported_shape_reason refuses it), rather than what wraps around.
inline unsigned grid_blocks(long long blocks) { return blocks < (1ll << 31) ? static_cast<unsigned>(blocks) : ~0u; }

struct LaunchGeometry {
    dim3 grid;
    dim3 block;
    unsigned dynamic_shared_bytes = 0;

    unsigned long long blocks() const { return static_cast<unsigned long long>(grid.x) * grid.y * grid.z; }
};

// One point in a family's space: values in the order of Family::params.
using ParamValues = std::vector<int>;

struct Family {
    std::string name;           // "async"
    std::string summary;        // one line for --help and listings
    std::string template_file;  // "sgemm_async.cuh" in templates/
    std::string kernel;         // the template's name, "sgemm_async"
    // The file of src/families that declares the family (base_name(__FILE__)): how its
    // parameters become template arguments, its constraints, launch geometry and workspace.
    // That text, with the launch code every family shares (family.h, family.cpp,
    // src/jit/loaded_kernel), is hashed with the templates into every stored kernel
    // (family_sources_hash): a winner's launch is as much its code as its binary is.
    std::string host_source;
    // A binary may hold a second kernel, launched after the main one: the stream-K tail
    // (ParamSpec::stream_k) or the split-K sum pass (ParamSpec::sum_pass). Their templates
    // take the same template parameters as `kernel`; empty where the family has none.
    std::string tail_kernel;
    std::string sum_pass_kernel;
    // Or the staging kernel (ParamSpec::aligned_only at 2), launched before the main one where
    // the call gives it work (stages_call).
    std::string stage_kernel;
    std::vector<ParamSpec> params;
    ParamValues defaults;
    // Pairs of parameters whose values one refinement move may trade (tuner/search.h).
    // Warptile's TM and TN: a thread tile turned on its side. 16x8 and 8x16 ran 2-4% apart
    // on the H200, and moving one parameter at a time cannot turn it without passing
    // through a slower tile (8x8 or 16x16).
    std::vector<std::pair<std::string, std::string>> swappable_params;
    int min_sm = 70;
    // Family-specific constraints: an empty string when `values` is valid, else why not.
    std::function<std::string(const ParamValues&, const ArchLimits&)> constraint_violation;
    std::function<LaunchGeometry(const ParamValues&, int M, int N, int K)> geometry;
    // Registers a thread of `values` needs, as the family's constraints estimate them before
    // ptxas has run; unset where the family does not say. The cost model's occupancy uses it
    // when it ranks candidates not yet compiled.
    std::function<int(const ParamValues&)> estimated_registers;
    // Bytes of SgemmArgs::workspace a launch needs on a device of `sms` SMs for a call of
    // alignment class `alignment` (alignment_class in db/shape_key.h); unset means none.
    std::function<std::size_t(const ParamValues&, int M, int N, int K, int sms, int alignment)> workspace;
    // Whether the template marks its blocks' timelines (templates/sgemm_timeline.cuh), for
    // `sgemm-bench --timeline`.
    bool records_timeline = false;

    // The value of parameter `param` in `values`; throws for an unknown name.
    int value(const ParamValues& values, const std::string& param) const;
    // Where parameter `param` sits in params (and in every ParamValues); throws for an unknown name.
    std::size_t param_index(const std::string& param) const;
    // "sgemm_async<128, 128, 8, 8, 8>": the expression NVRTC instantiates (the values in
    // order; a split count as "true" or "false", whether it exceeds 1).
    std::string name_expression(const ParamValues& values) const;
    // Whether `values` turn the stream-K tail on (a stream_k parameter at 1).
    bool has_stream_k_tail(const ParamValues& values) const;
    // Whether `values` leave the split-K sum to the sum pass (a sum_pass parameter at 1).
    bool has_sum_pass(const ParamValues& values) const;
    // Whether `values` add split-K's slices into C with float atomics (a sum_pass parameter
    // at 2), so that the same call gives C in a different last bit from run to run.
    bool sums_with_atomics(const ParamValues& values) const;
    // Whether `values` have split-K's slices add into C in turn (a sum_pass parameter at 3).
    bool sums_in_order(const ParamValues& values) const;
    // Whether `values` stage the operands (an aligned_only parameter at 2): the binary's
    // second kernel is then stage_kernel, and it runs first.
    bool stages_operands(const ParamValues& values) const;
    // The second kernel's template name (tail_kernel, sum_pass_kernel or stage_kernel), or ""
    // without one.
    std::string second_kernel(const ParamValues& values) const;
    // The second kernel's name expression, or "" without one.
    std::string second_name_expression(const ParamValues& values) const;
    // The second kernel's symbol in the cubin, from the main kernel's: the two templates take
    // the same arguments, and the Itanium C++ ABI mangles a function template instance as
    // "_Z" <length><name> <arguments>, so only the name part differs. "" without one.
    std::string second_symbol(const ParamValues& values, const std::string& main_symbol) const;
    // The second kernel's launch of an M x N x K problem of alignment class `alignment` on
    // `sms` SMs: the stream-K tail's blocks (stream_k_split) with the main kernel's block and
    // shared memory, or the sum pass over M x N (SGEMM_SUM_PASS_QUADS x slices threads a
    // block, a float4 of shared memory each), or the staging kernel (up to two blocks per SM
    // for each of its two tasks, templates/sgemm_staging.cuh) where it has a task: below
    // class 16 or where N mod 4 > 0. grid.x is 0 without one.
    LaunchGeometry second_geometry(const ParamValues& values, int M, int N, int K, int sms, int alignment) const;
    // Whether a staging binary has work before its main kernel for a call of class
    // `alignment`: operands to copy (only below class 16 may a row miss 16-byte copies) or
    // C's last N mod 4 columns. False for every other binary.
    bool stages_call(const ParamValues& values, int N, int alignment) const;
    // The division of geometry()'s grid.x tiles on a device of `sms` SMs. Without a tail,
    // or where the tiles fill whole waves, the main kernel takes them all.
    StreamKSplit stream_k_split(const ParamValues& values, int M, int N, int K, int sms) const;
    // Whether a split_count parameter exceeds 1: the launch splits K over gridDim.y.
    bool splits_k(const ParamValues& values) const;
    // "async BM=128 BN=128 BK=8 TM=8 TN=8": for people and the database.
    std::string describe(const ParamValues& values) const;
    // Empty when `values` has one value per parameter, each from its list; else a sentence
    // saying which is wrong. Needs no arch.
    std::string values_problem(const ParamValues& values) const;
    // Empty when `values` may be compiled for `arch`, else a sentence saying why not:
    // values_problem, the arch too old, or a constraint.
    std::string invalid_reason(const ParamValues& values, Arch arch) const;
    // Empty when some compile target may compile `values`; else invalid_reason for the newest
    // target. What can be said of a configuration before the GPU is known.
    std::string invalid_on_every_target(const ParamValues& values) const;
    // Empty when the kernel can run an M x N x K problem on `arch` (grid and shared-memory
    // limits), else why not.
    std::string unsupported_shape_reason(const ParamValues& values, int M, int N, int K, Arch arch) const;
    // Whether the configuration reads A and B with these transposes: a family with a TA or
    // TB parameter takes the layout its value names; one without reads that operand as is.
    bool reads_transposes(const ParamValues& values, bool trans_a, bool trans_b) const;
    // Bytes of workspace a call of alignment class `alignment` needs (the workspace function).
    // A staging binary needs room for its copies only below class 16, since a call of class
    // 16 has every row where 16-byte copies may read it.
    std::size_t workspace_bytes(const ParamValues& values, int M, int N, int K, int sms, int alignment) const;
    // Alignment in bytes that A, B, C and lda*4, ldb*4, ldc*4 must have: 16 where an
    // aligned_only parameter is 1, else 4. Kernels test for 16 bytes at run time and take
    // their 128-bit paths when it holds; an aligned_only binary assumes it, and a staging
    // one (2) makes it so.
    int required_alignment(const ParamValues& values) const;
    // Every valid point of the space for `arch`, in the order of the parameter lists.
    std::vector<ParamValues> valid_configs(Arch arch) const;
};

}  // namespace sgemm
