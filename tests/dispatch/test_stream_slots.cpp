// The per-stream slot table: a stream keeps the slot it claimed, other streams get others or
// none, a release frees it, and a stream of another CUDA context gets none. Slots with no
// workspace and no cuBLAS handle touch no device, and the contexts are stand-ins, so this runs
// without a GPU (one test asks the runtime for cudaStreamPerThread's id).
//
// Not tested: that racing first calls on one stream share a slot, which the claim lock
// ensures. The race it closes needs a release by a third stream to land between two threads'
// atomic loads; two million rounds of three streams on two cores never produced it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>

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

// Stand-ins for two contexts, which the table only compares, and for the driver that names a
// stream's: fake stream 9 is of the other context, the driver cannot name fake stream 8's, and
// the legacy stream is the other context's while `legacy_in_theirs` (that context is current).
const CUcontext kOurs = reinterpret_cast<CUcontext>(0x1000), kTheirs = reinterpret_cast<CUcontext>(0x2000);
std::atomic<bool> legacy_in_theirs{false};
std::optional<CUcontext> stand_in_context_of(cudaStream_t stream) noexcept {
    if (stream == nullptr || stream == cudaStreamLegacy) return legacy_in_theirs ? kTheirs : kOurs;
    if (stream == fake_stream(9)) return kTheirs;
    if (stream == fake_stream(8)) return std::nullopt;
    return kOurs;
}

StreamSlots slots_of_our_context(int count) {
    return StreamSlots(count, 0, false, CUBLAS_DEFAULT_MATH, StreamContexts{kOurs, stand_in_context_of});
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

// A stream of another context than the slots' memory is refused and takes no slot (it took
// one and kept it); one whose context the driver cannot name is let through, as before the
// check, and its launch says what is wrong.
TEST(StreamSlots, AStreamOfAnotherContextTakesNoSlot) {
    StreamSlots slots = slots_of_our_context(1);
    const SlotClaim theirs = slots.slot_for(fake_stream(9));
    EXPECT_TRUE(theirs.other_context);
    EXPECT_EQ(theirs.slot, nullptr);
    EXPECT_EQ(slots.used(), 0);
    const SlotClaim unnamed = slots.slot_for(fake_stream(8));
    EXPECT_FALSE(unnamed.other_context);
    EXPECT_NE(unnamed.slot, nullptr);
    EXPECT_EQ(slots.release(fake_stream(8)), cudaSuccess);
    const SlotClaim ours = slots.slot_for(fake_stream(1));
    EXPECT_FALSE(ours.other_context);
    EXPECT_NE(ours.slot, nullptr);
}

// The legacy default stream is one handle in every context: it is checked at every call, also
// once it holds a slot, so that a call made while another context is current does not use it.
TEST(StreamSlots, TheLegacyStreamIsCheckedAtEveryCall) {
    StreamSlots slots = slots_of_our_context(1);
    legacy_in_theirs = false;
    StreamSlot* held = slots.slot_for(nullptr).slot;
    ASSERT_NE(held, nullptr);
    legacy_in_theirs = true;
    const SlotClaim under_theirs = slots.slot_for(cudaStreamLegacy);
    legacy_in_theirs = false;
    EXPECT_TRUE(under_theirs.other_context);
    EXPECT_EQ(under_theirs.slot, nullptr);
    EXPECT_EQ(slots.slot_for(nullptr).slot, held);
    EXPECT_EQ(slots.used(), 1);
}
