// The tuner's operands, drawn on the host in chunks and copied through pinned staging
// buffers: every element on the device must be the formula's value at its own index, in
// fp32, fp64 and as absolute values, across chunk boundaries and reused staging buffers.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gpu/gpu_test_env.h"
#include "tuner/random_operands.h"

using namespace sgemm;

namespace {

// Elements per 16 MiB chunk of floats: sizes around it and past two chunks (when the first
// staging buffer is reused) are where an offset or a stale buffer would show.
constexpr std::size_t float_chunk = (std::size_t{16} << 20) / sizeof(float);

template <typename T>
void expect_drawn(std::size_t count, std::uint64_t seed, Magnitude magnitude) {
    DeviceBuffer<T> buffer(count);
    SGEMM_CUDA_CHECK(cudaMemset(buffer.data(), 0xff, buffer.bytes()));  // NaN where nothing lands
    SGEMM_CUDA_CHECK(cudaDeviceSynchronize());  // the legacy stream's memset does not order the upload's stream
    upload_random(buffer, seed, magnitude);
    const std::vector<T> host = buffer.download();
    std::size_t wrong = 0, first_wrong = count;
    for (std::size_t i = 0; i < count; ++i) {
        const float v = random_operand(seed, i);
        const T want = static_cast<T>(magnitude == Magnitude::absolute_values ? std::fabs(v) : v);
        if (!(host[i] == want) && wrong++ == 0) first_wrong = i;
    }
    EXPECT_EQ(wrong, 0u) << "of " << count << " elements; the first at " << first_wrong;
}

TEST(RandomOperands, EveryElementIsTheFormulasValueAtItsIndex) {
    SGEMM_REQUIRE_GPU(gpu);
    for (std::size_t count : {std::size_t{1}, std::size_t{7}, float_chunk - 1, float_chunk, 2 * float_chunk + 17,
                              3 * float_chunk}) {
        SCOPED_TRACE(count);
        expect_drawn<float>(count, 11, Magnitude::signed_values);
    }
    expect_drawn<float>(2 * float_chunk + 5, 12, Magnitude::absolute_values);
    expect_drawn<double>(float_chunk + 3, 13, Magnitude::signed_values);  // fp64 chunks hold half as many
}

TEST(RandomOperands, ValuesAreOddMultiplesOfTwoToTheMinus24InsideMinusOneToOne) {
    // Odd multiples of 2^-24 are never zero: a zero operand would hide an unwritten output.
    int not_odd = 0, outside = 0, same = 0;
    for (std::uint64_t i = 0; i < 100000; ++i) {
        const float v = random_operand(5, i);
        outside += !(v > -1.0f && v < 1.0f);
        not_odd += std::fabs(std::fmod(std::ldexp(static_cast<double>(v), 24), 2.0)) != 1.0;
        same += v == random_operand(6, i);
    }
    EXPECT_EQ(outside, 0);
    EXPECT_EQ(not_odd, 0);
    EXPECT_LT(same, 5);
    // The draw whose top 24 bits are 2^23, the middle of the range: an earlier mapping,
    // k / 2^23 - 1, made it exactly 0.
    EXPECT_NE(random_operand(5, 39776688), 0.0f);
}

}  // namespace
