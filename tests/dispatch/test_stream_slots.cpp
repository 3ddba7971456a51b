// The per-stream slot table: a stream keeps the slot it claimed, other streams get others or
// none, and a release frees it. Slots with no workspace and no cuBLAS handle touch no
// device, so this runs without a GPU (the last test asks the runtime for a stream's id).
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

// The slot of `stream` in `slots`, whose id is read without the CUDA runtime (any stream but
// cudaStreamPerThread).
StreamSlot* slot_of(StreamSlots& slots, cudaStream_t stream) {
    const SlotClaim claim = slots.slot_for(stream);
    EXPECT_EQ(claim.id_error, cudaSuccess);
    EXPECT_FALSE(claim.other_context) << "slots that hold nothing of a context serve any stream";
    return claim.slot;
}

}  // namespace

TEST(StreamSlots, AStreamKeepsItsSlotAndOthersGetTheirOwn) {
    StreamSlots slots = slots_without_device(3);
    StreamSlot* first = slot_of(slots, fake_stream(1));
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(slot_of(slots, fake_stream(1)), first);
    StreamSlot* second = slot_of(slots, fake_stream(2));
    ASSERT_NE(second, nullptr);
    EXPECT_NE(second, first);
    EXPECT_EQ(slots.used(), 2);
}

TEST(StreamSlots, TheLegacyDefaultStreamHasOneSlotUnderBothItsNames) {
    StreamSlots slots = slots_without_device(2);
    StreamSlot* by_null = slot_of(slots, nullptr);
    ASSERT_NE(by_null, nullptr);
    EXPECT_EQ(slot_of(slots, cudaStreamLegacy), by_null);
    EXPECT_EQ(slots.used(), 1);
}

TEST(StreamSlots, AFullTableRefusesANewStreamUntilOneIsReleased) {
    StreamSlots slots = slots_without_device(2);
    StreamSlot* first = slot_of(slots, fake_stream(1));
    ASSERT_NE(slot_of(slots, fake_stream(2)), nullptr);
    EXPECT_EQ(slot_of(slots, fake_stream(3)), nullptr);
    EXPECT_NE(slot_of(slots, fake_stream(1)), nullptr);  // the holders still find theirs

    EXPECT_EQ(cudaSuccess, slots.release(fake_stream(1)));
    EXPECT_EQ(slots.used(), 1);
    EXPECT_EQ(slot_of(slots, fake_stream(3)), first);
    EXPECT_EQ(slot_of(slots, fake_stream(1)), nullptr);  // it gave its slot away
}

TEST(StreamSlots, ReleasingAStreamThatHoldsNothingChangesNothing) {
    StreamSlots slots = slots_without_device(2);
    StreamSlot* held = slot_of(slots, fake_stream(1));
    EXPECT_EQ(cudaSuccess, slots.release(fake_stream(2)));
    EXPECT_EQ(slots.used(), 1);
    EXPECT_EQ(slot_of(slots, fake_stream(1)), held);
    EXPECT_EQ(cudaSuccess, slots.release(fake_stream(1)));
    EXPECT_EQ(cudaSuccess, slots.release(fake_stream(1)));
    EXPECT_EQ(slots.used(), 0);
}

// cudaStreamPerThread's id comes from the runtime. Where the runtime cannot give it (no GPU
// here, or a context lost to a device fault) the table passes on the runtime's error, which
// dispatch reports as a CUDA error, not as a full table; where it can, the stream gets a slot.
TEST(StreamSlots, AStreamWhoseIdCannotBeReadIsAnErrorNotARefusal) {
    StreamSlots slots = slots_without_device(1);
    unsigned long long id = 0;
    const cudaError_t runtime_says = cudaStreamGetId(cudaStreamPerThread, &id);
    const SlotClaim claim = slots.slot_for(cudaStreamPerThread);
    EXPECT_EQ(claim.id_error, runtime_says);
    EXPECT_EQ(claim.slot != nullptr, runtime_says == cudaSuccess);
    EXPECT_EQ(slots.used(), runtime_says == cudaSuccess ? 1 : 0);
    EXPECT_EQ(slots.release(cudaStreamPerThread), runtime_says);
}
