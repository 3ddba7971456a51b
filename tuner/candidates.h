// The candidates for one shape: every valid configuration of the chosen families that reads
// the shape's transposes and can run its size on this arch. The ptxas figures prune again
// after compiling (spills_reason).
#pragma once
#include <string>
#include <vector>

#include "db/shape_key.h"
#include "src/families/family.h"
#include "src/jit/ptxas_info.h"

namespace sgemm {

struct Candidate {
    const Family* family = nullptr;
    ParamValues values;

    std::string describe() const { return family->describe(values); }
    bool operator==(const Candidate& o) const { return family == o.family && values == o.values; }
};

// The families a search covers unless told otherwise: every registered family except the
// teaching rungs below rung 4, which never win (naive, smem, blocktile).
std::vector<std::string> default_families();

// The configurations of `families` that can run `shape` on `arch`: its transposes, its
// alignment class and its extents. `families` empty means default_families(); name the
// teaching rungs to include them. Configurations that add split-K's slices with float atomics
// (Family::sums_with_atomics), whose results vary from run to run in the last bits, only
// with atomics_allowed (sgemm-tune --allow-atomics), as cuBLAS uses atomics only when told.
std::vector<Candidate> enumerate_candidates(const ShapeKey& shape, Arch arch, const std::vector<std::string>& families,
                                            bool atomics_allowed = false);

// Why a compiled candidate may not be timed: spills to local memory. Empty when it may.
std::string spills_reason(const PtxasInfo& ptxas);

}  // namespace sgemm
