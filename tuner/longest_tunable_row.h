// The longest row of A, B or C a GEMM can have to be tuned, shared by the shapes CSV's reader
// (tuner/shapes_csv.h) and sgemm-shapes, which must not write a row that the reader refuses.
// Header only: sgemm-shapes links no CUDA and no tuner.
#pragma once
#include <limits>
#include <string>

namespace sgemm {

// The check lays each row out up to 7 floats longer (later_layouts_for,
// tuner/candidate_check.h) and copies the rows there by cudaMemcpy2DAsync, which refuses a pitch
// (a row's bytes) past the device's limit, 2^31 - 1 bytes on NVIDIA's GPUs (cudaDevAttrMaxPitch).
constexpr int kLongestCheckedRow = std::numeric_limits<int>::max() / static_cast<int>(sizeof(float)) - 7;

// Why a row longer than kLongestCheckedRow cannot be tuned, to follow the rows named.
inline std::string why_rows_are_limited() {
    return "the check lays each row out up to 7 floats longer, and CUDA copies rows of at most 2^31 - 1 bytes, so "
           "rows of at most " + std::to_string(kLongestCheckedRow) + " floats can be tuned";
}

}  // namespace sgemm
