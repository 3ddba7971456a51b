// How dispatch chooses the kernel for a call, and how `sgemm-db explain` says why. One rule,
// in one place:
//
//   1. exact    the device's winner for the call's very shape key;
//   2. nearest  else, among the device's winners with the same transposes, precision and
//               alignment class and an M within a factor of 2 of the call's, the nearest in
//               log space: the smallest |log2 M' - log2 M| first (M is the batch-like
//               dimension, the one that changes the best tiling most), then the smallest
//               |log2 N' - log2 N| + |log2 K' - log2 K|, then the smaller shape; a winner
//               whose kernel cannot run the call's shape (the caller says which) is passed
//               over for the next;
//   3. fallback else nothing from the database: the caller's fallback policy decides.
//
// A winner whose kernel is cuBLAS selects cuBLAS. The winners given must all be of the one
// device the call runs on; a row of another device or toolchain is never a candidate.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "db/records.h"

namespace sgemm {

enum class SelectionKind { Exact, Nearest, Fallback };

struct Selection {
    SelectionKind kind = SelectionKind::Fallback;
    const Winner* winner = nullptr;  // into the winners given; null for Fallback
    std::string reason;              // one or two sentences, for explain
};

// Why a winner's kernel cannot run `shape` (e.g. grid limits), or empty when it can.
using CannotRun = std::function<std::string(const Winner& winner, const ShapeKey& shape)>;

// The nearest-shape candidates for `shape`, in the order rule 2 tries them, at any distance
// in M (the tuner takes the nearest ones' kernels as starting points).
std::vector<const Winner*> nearest_candidates(const std::vector<Winner>& winners, const ShapeKey& shape);

// The largest M at which rule 2 can choose `w` for a call of w's own N and K (a batch between
// two tuned ones, on the same weights): twice w's M, or less where a larger tuned M of w's
// transposes, precision and alignment class, whose kernel can run w's N and K (`cannot_run`),
// comes as near first. Dispatch sizes each stream's split-K workspace to it. (Where that
// larger one is passed over at a call for want of workspace, a staging winner at an M above
// its own, w is given a larger M than this: dispatch then re-splits it to fit, or runs cuBLAS.)
int largest_m_served(const std::vector<Winner>& winners, const Winner& w, const CannotRun& cannot_run = {});

// Applies the rule. Without `cannot_run`, every kernel is taken to run every shape.
Selection select_kernel(const std::vector<Winner>& winners, const ShapeKey& shape, const CannotRun& cannot_run = {});

}  // namespace sgemm
