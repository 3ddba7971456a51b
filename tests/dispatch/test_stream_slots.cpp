// The per-stream slot table: a stream keeps the slot it claimed, other streams get others or
// none, and a release frees it. Slots with no workspace and no cuBLAS handle touch no
// device, so this runs without a GPU.
//
// Not tested: that racing first calls on one stream share a slot, which the claim lock
// ensures. The race it closes needs a release by a third stream to land between two threads'
// atomic loads; two million rounds of three streams on two cores never produced it.
#include <gtest/gtest.h>

#include <cstdint>

#include "src/dispatch/stream_slots.h"

using namespace sgemm;

namespace {

// Never used as a stream: the table only compares the handles.
cudaStream_t fake_stream(std::uintptr_t id) { return reinterpret_cast<cudaStream_t>(id * 0x100); }

StreamSlots slots_without_device(int count) { return StreamSlots(count, 0, false, CUBLAS_DEFAULT_MATH); }

}  // namespace

TEST(StreamSlots, AStreamKeepsItsSlotAndOthersGetTheirOwn) {
    StreamSlots slots = slots_without_device(3);
    StreamSlot* first = slots.slot_for(fake_stream(1));
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(slots.slot_for(fake_stream(1)), first);
    StreamSlot* second = slots.slot_for(fake_stream(2));
    ASSERT_NE(second, nullptr);
    EXPECT_NE(second, first);
    EXPECT_EQ(slots.used(), 2);
}

TEST(StreamSlots, TheLegacyDefaultStreamHasOneSlotUnderBothItsNames) {
    StreamSlots slots = slots_without_device(2);
    StreamSlot* by_null = slots.slot_for(nullptr);
    ASSERT_NE(by_null, nullptr);
    EXPECT_EQ(slots.slot_for(cudaStreamLegacy), by_null);
    EXPECT_EQ(slots.used(), 1);
}

TEST(StreamSlots, AFullTableRefusesANewStreamUntilOneIsReleased) {
    StreamSlots slots = slots_without_device(2);
    StreamSlot* first = slots.slot_for(fake_stream(1));
    ASSERT_NE(slots.slot_for(fake_stream(2)), nullptr);
    EXPECT_EQ(slots.slot_for(fake_stream(3)), nullptr);
    EXPECT_NE(slots.slot_for(fake_stream(1)), nullptr);  // the holders still find theirs

    EXPECT_TRUE(slots.release(fake_stream(1)));
    EXPECT_EQ(slots.used(), 1);
    EXPECT_EQ(slots.slot_for(fake_stream(3)), first);
    EXPECT_EQ(slots.slot_for(fake_stream(1)), nullptr);  // it gave its slot away
}

TEST(StreamSlots, ReleasingAStreamThatHoldsNothingChangesNothing) {
    StreamSlots slots = slots_without_device(2);
    StreamSlot* held = slots.slot_for(fake_stream(1));
    EXPECT_TRUE(slots.release(fake_stream(2)));
    EXPECT_EQ(slots.used(), 1);
    EXPECT_EQ(slots.slot_for(fake_stream(1)), held);
    EXPECT_TRUE(slots.release(fake_stream(1)));
    EXPECT_TRUE(slots.release(fake_stream(1)));
    EXPECT_EQ(slots.used(), 0);
}
