// A killed tuning run resumes where it stopped: shapes with a winner for this device are
// skipped unless --retune, on a real database file.
#include <gtest/gtest.h>

#include "tests/db/fixture.h"
#include "tuner/tuner.h"

using namespace sgemm;
using sgemm::testing::TempDir;

namespace {

ShapeRow row(int M, int N, int K, int line) {
    ShapeRow r;
    r.key.M = M, r.key.N = N, r.key.K = K;
    r.line = line;
    return r;
}

TEST(Resume, ShapesWithAWinnerAreSkippedUnlessRetune) {
    TempDir dir;
    const std::vector<ShapeRow> shapes = {row(1, 4096, 4096, 2), row(8, 4096, 4093, 3), row(32, 4096, 4096, 4)};
    std::string device_id;
    {
        // The run that was killed: shape 1 finished (measurements and winner), shape 2 got
        // as far as one measurement.
        TuningStore store(dir.file("tuning.db"));
        device_id = store.add_device(sgemm::testing::h200());
        store.put_binary(sgemm::testing::naive_binary());
        ShapeKey first = shapes[0].key;
        first.alignment = packed_alignment(first);
        store.record_measurement(sgemm::testing::measurement(device_id, first, 0.03));
        store.put_winner(sgemm::testing::winner(device_id, first, 1.0, nullptr));
        ShapeKey second = shapes[1].key;
        second.alignment = packed_alignment(second);
        store.record_measurement(sgemm::testing::measurement(device_id, second, 0.05));
    }
    TuningStore store(dir.file("tuning.db"));
    const std::vector<ShapeRow> todo = shapes_to_tune(store, device_id, shapes, false);
    ASSERT_EQ(todo.size(), 2u);
    EXPECT_EQ(todo[0].line, 3);
    EXPECT_EQ(todo[1].line, 4);
    EXPECT_EQ(todo[0].key.alignment, 4);  // K = 4093: rows of A are not 16-byte aligned
    EXPECT_EQ(todo[1].key.alignment, 16);
    EXPECT_EQ(shapes_to_tune(store, device_id, shapes, true).size(), 3u);
    // Another device has tuned nothing.
    const std::string other = store.add_device(sgemm::testing::h200(1));
    EXPECT_EQ(shapes_to_tune(store, other, shapes, false).size(), 3u);
}

}  // namespace

namespace {

// --from-misses: every fp32 miss becomes a shape weighted by its count, in the order given;
// a tf32 miss, which dispatch records but the tuner cannot tune yet, is left out and counted.
TEST(Resume, MissesBecomeShapesAndOtherPrecisionsAreLeftOut) {
    std::vector<Miss> misses(3);
    misses[0].shape.M = 8, misses[0].shape.N = 4096, misses[0].shape.K = 4096, misses[0].count = 40;
    misses[1].shape = misses[0].shape;
    misses[1].shape.precision = GemmPrecision::tf32;
    misses[1].count = 30;
    misses[2].shape.M = 3, misses[2].shape.N = 100, misses[2].shape.K = 7, misses[2].count = 1;
    const ShapesOfMisses shapes = shapes_of_misses(misses);
    ASSERT_EQ(shapes.rows.size(), 2u);
    EXPECT_EQ(shapes.left_out, 1);
    EXPECT_EQ(shapes.rows[0].key, misses[0].shape);
    EXPECT_EQ(shapes.rows[0].weight, 40.0);
    EXPECT_EQ(shapes.rows[0].name, "40 misses");
    EXPECT_EQ(shapes.rows[1].key, misses[2].shape);
    EXPECT_EQ(shapes.rows[1].name, "1 miss");
}

}  // namespace
