// An analytic cost model that ranks candidates before anything is timed, so the default
// search times only the few most promising ones.
//
// For a candidate it estimates, from the family's launch geometry:
//  - occupancy: blocks per SM allowed by threads, registers (ptxas's once compiled, before
//    that the family's estimate) and shared memory; and how many warps per SM the thread
//    tile needs to hide latency (fewer for tiles of many accumulators);
//  - wave efficiency: the busiest SM's share of blocks against the average (a grid of 132
//    blocks on 132 SMs is perfect, 133 blocks take two rounds on one SM); for a family that
//    streams B, the rounds past its resident blocks and SMs left idle past half;
//  - tile efficiency on edges: useful elements of C over the padded tiles computed;
//  - the roofline: compute time at the family's reachable fraction of the FFMA peak, and
//    memory time for the operands (plus the re-reads that miss L2 and the split-K partials);
// and takes the larger, plus a launch cost and split-K's finish (one block per tile reads
// every slice's partial back). The per-family fractions of peak are measured
// figures (docs/RESULTS.md) rounded, not fitted.
#pragma once
#include <vector>

#include "tuner/candidates.h"
#include "tuner/device_model.h"

namespace sgemm {

struct CostEstimate {
    double seconds = 0;
    double compute_seconds = 0, memory_seconds = 0;
    // split-K's sum of the slices' partials, after the last loop; a stream-K tail's ranking of
    // its runs and sum of its parts
    double finish_seconds = 0;
    double staging_seconds = 0;  // the staging kernel before the main one (warptile's ALIGNED = 2)
    int blocks_per_sm = 0;
    double wave_efficiency = 0;
    double tile_efficiency = 0;
};

CostEstimate estimate_cost(const Candidate& candidate, const ShapeKey& shape, const DeviceModel& device,
                           const PtxasInfo* ptxas = nullptr);

// Whether a and b tile the same matrix: both C, or both C^T (warptile's CT = 1).
bool same_output_tiling(const Candidate& a, const Candidate& b);

// The candidates, cheapest estimate first (stable for ties).
std::vector<Candidate> rank_by_cost(std::vector<Candidate> candidates, const ShapeKey& shape, const DeviceModel& device);

}  // namespace sgemm
