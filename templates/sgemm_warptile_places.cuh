// Which stored layout fills each place of a warptile block tile (sgemm_warptile.cuh): the
// loaders copy an operand stored as rows of k as it is, and transpose one stored as rows of
// x. With CT = 1 (tiles of C^T) B takes the tile's A place and A its B place. The staging
// kernel (sgemm_staging.cuh) follows the same rule, so it lives apart from both.
#pragma once

// Whether the operands in the tile's A and B places are stored as rows of k.
constexpr bool sgemm_warptile_a_k_rows(int ta, int tb, int ct) { return ct ? tb == 0 : ta == 1; }
constexpr bool sgemm_warptile_b_k_rows(int ta, int tb, int ct) { return ct ? ta == 1 : tb == 0; }
