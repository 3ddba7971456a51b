// The tuner's test operands, drawn straight into device memory.
//
// Element i of the matrix drawn from `seed` is splitmix64(seed, i) mapped to an odd multiple
// of 2^-24 in (-1, 1), so never zero. The values are counter-based, so they do not depend on
// how the work is split, and the same seed gives the same matrix in fp32, in fp64 (widened
// exactly) and as absolute values.
#pragma once
#include <cstdint>

#include "src/cuda/device_buffer.h"

namespace sgemm {

// Element i of the matrix drawn from `seed`.
float random_operand(std::uint64_t seed, std::uint64_t i);

enum class Magnitude { signed_values, absolute_values };

// Fills all of `out` with the matrix drawn from `seed` (or its absolute values) and waits
// until the copy has landed. No host copy of the matrix is made: the values are generated
// on all cores in chunks and copied through two pinned staging buffers, each chunk's copy
// overlapping the next chunk's generation. For a 128256 x 4096 weight, whole-matrix host
// arrays (their page faults and pageable copies) had cost the tuner about 3 s per shape.
template <typename T>
void upload_random(DeviceBuffer<T>& out, std::uint64_t seed, Magnitude magnitude);

}  // namespace sgemm
