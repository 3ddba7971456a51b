// What a decode batch costs. A GEMM of M rows against an N x K weight reads the same weight
// as the batch-1 GEMM, so in a memory-bound decode step batch should be nearly free; the
// measure is the batch's winning time against cuBLAS's time for the same GEMM at M = 1.
#pragma once
#include <optional>
#include <vector>

#include "tuner/tuner.h"

namespace sgemm {

// For each outcome with M > 1: its winner's time over cuBLAS's time at M = 1 for the same N,
// K, transposes and precision, when the outcomes hold that batch-1 shape (the first of its
// alignment class, else the first of any; batch_cost.cpp says why). Empty for the
// batch-1 shapes themselves and where no batch-1 shape matches.
std::vector<std::optional<double>> time_over_cublas_batch1(const std::vector<ShapeOutcome>& outcomes);

}  // namespace sgemm
