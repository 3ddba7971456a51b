// sgemm-db verify on the GPU: it loads every winner's binary of this GPU's arch, and for a
// configuration with a stream-K tail (warptile SK = 1) the tail kernel as well, since
// dispatch launches both.
#include <gtest/gtest.h>

#include "db/verify.h"
#include "src/records/kernel_records.h"
#include "tests/db/fixture.h"
#include "tests/gpu/gpu_test_env.h"

using namespace sgemm;
using namespace sgemm::testing;

namespace {

// A database holding this GPU's device and one winner: warptile's default tile with a
// stream-K tail (SK = 1), filed over that configuration's own cubin, or over the cubin of the
// same tile without the tail.
class StreamKWinner {
public:
    StreamKWinner(const DeviceInfo& device, bool compile_with_tail)
        : store_(dir_.file("t.db")), warptile_(find_family("warptile")), values_(warptile_.defaults) {
        values_[warptile_.param_index("SK")] = 1;
        const ParamValues& compiled = compile_with_tail ? values_ : warptile_.defaults;
        binary_ = to_binary(compile_kernel(warptile_, compiled, Arch{device.sm()}), kernel_ref(warptile_, values_));
        if (!compile_with_tail) binary_.cache_key += " (claims a tail)";
        store_.put_binary(binary_);
        const std::string id = store_.add_device(fingerprint_of(device));
        store_.put_winner(winner(id, shape(1000, 1000, 1000), 0.5, &binary_));
    }

    TuningStore& store() { return store_; }
    const Binary& binary() const { return binary_; }
    // The name of the winner's instantiation, as a mismatch report gives it.
    std::string name_expression() const { return warptile_.name_expression(values_); }

private:
    TempDir dir_;
    TuningStore store_;
    const Family& warptile_;
    ParamValues values_;
    Binary binary_;
};

// As sgemm-db verify runs on a GPU.
VerifyReport verify_on_gpu(TuningStore& store, const DeviceInfo& device) {
    const auto mismatch = [](const Winner& w, const DeviceFingerprint& d) { return binary_mismatch(w, d); };
    return verify_store(store, binary_load_failure, device.sm(), mismatch);
}

bool any_mentions(const VerifyReport& r, const std::string& text) {
    for (const std::string& p : r.problems)
        if (p.find(text) != std::string::npos) return true;
    return false;
}

TEST(VerifyOnGpu, LoadsBothKernelsOfAStreamKWinner) {
    SGEMM_REQUIRE_GPU(gpu);
    StreamKWinner db(gpu->device, true);
    ASSERT_FALSE(from_binary(db.binary()).second_lowered_name.empty());

    const VerifyReport r = verify_on_gpu(db.store(), gpu->device);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
    EXPECT_EQ(r.binaries_loaded, 1);
    EXPECT_EQ(binary_load_failure(db.binary()), "");
}

// A stream-K winner filed over the cubin of the same tile without the tail (as an edited or
// merged database could pair them): its main kernel loads, its tail does not. sgemm-db
// verify reports it as another instantiation's binary before it tries a load; without that
// check, the load itself fails on the tail.
TEST(VerifyOnGpu, ReportsAStreamKWinnerWhoseCubinLacksTheTail) {
    SGEMM_REQUIRE_GPU(gpu);
    StreamKWinner db(gpu->device, false);

    EXPECT_NE(binary_load_failure(db.binary()), "")
        << "the tail's symbol " << from_binary(db.binary()).second_lowered_name << " is not in this cubin";
    const VerifyReport checked = verify_on_gpu(db.store(), gpu->device);
    EXPECT_TRUE(any_mentions(checked, "is not " + db.name_expression())) << (checked.ok() ? "no problem" : checked.problems[0]);
    const VerifyReport loaded = verify_store(db.store(), binary_load_failure, gpu->device.sm());
    EXPECT_TRUE(any_mentions(loaded, "loading it on the GPU failed")) << (loaded.ok() ? "no problem" : loaded.problems[0]);
    EXPECT_EQ(loaded.binaries_loaded, 0);
}

}  // namespace
