// The warp-tiled family (templates/sgemm_warptile.cuh): block, warp and thread tiles, a
// multi-stage cp.async pipeline, all four transposes, and split-K for small grids.
#pragma once
#include "src/families/family.h"

namespace sgemm {

Family warptile_family();

}  // namespace sgemm
