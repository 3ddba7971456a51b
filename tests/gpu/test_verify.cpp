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

ParamValues with_stream_k_tail(const Family& warptile) {
    ParamValues values = warptile.defaults;
    values[warptile.param_index("SK")] = 1;
    return values;
}

// As sgemm-db verify runs on a GPU.
VerifyReport verify_on_gpu(TuningStore& store, const DeviceInfo& device) {
    const auto mismatch = [](const Winner& w, int sm) { return binary_mismatch(w, Arch{sm}); };
    return verify_store(store, binary_load_failure, device.sm(), mismatch);
}

bool any_mentions(const VerifyReport& r, const std::string& text) {
    for (const std::string& p : r.problems)
        if (p.find(text) != std::string::npos) return true;
    return false;
}

TEST(VerifyOnGpu, LoadsBothKernelsOfAStreamKWinner) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(fingerprint_of(gpu->device));
    const Family& warptile = find_family("warptile");
    const ParamValues values = with_stream_k_tail(warptile);
    const Binary binary = to_binary(compile_kernel(warptile, values, Arch{gpu->device.sm()}), kernel_ref(warptile, values));
    ASSERT_FALSE(from_binary(binary).tail_lowered_name.empty());
    store.put_binary(binary);
    store.put_winner(winner(id, shape(1000, 1000, 1000), 0.5, &binary));

    const VerifyReport r = verify_on_gpu(store, gpu->device);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
    EXPECT_EQ(r.binaries_loaded, 1);
    EXPECT_EQ(binary_load_failure(binary), "");
}

// A stream-K winner filed over the cubin of the same tile without the tail (as an edited or
// merged database could pair them): its main kernel loads, its tail does not. sgemm-db
// verify reports it as another instantiation's binary before it tries a load; without that
// check, the load itself fails on the tail.
TEST(VerifyOnGpu, ReportsAStreamKWinnerWhoseCubinLacksTheTail) {
    SGEMM_REQUIRE_GPU(gpu);
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(fingerprint_of(gpu->device));
    const Family& warptile = find_family("warptile");
    const ParamValues values = with_stream_k_tail(warptile);
    Binary binary = to_binary(compile_kernel(warptile, warptile.defaults, Arch{gpu->device.sm()}),
                              kernel_ref(warptile, values));
    binary.cache_key += " (claims a tail)";
    store.put_binary(binary);
    store.put_winner(winner(id, shape(1000, 1000, 1000), 0.5, &binary));

    const std::string failure = binary_load_failure(binary);
    EXPECT_NE(failure, "") << "the tail's symbol " << from_binary(binary).tail_lowered_name << " is not in this cubin";
    const VerifyReport checked = verify_on_gpu(store, gpu->device);
    EXPECT_TRUE(any_mentions(checked, "is not " + warptile.name_expression(values))) << (checked.ok() ? "no problem" : checked.problems[0]);
    const VerifyReport loaded = verify_store(store, binary_load_failure, gpu->device.sm());
    EXPECT_TRUE(any_mentions(loaded, "loading it on the GPU failed")) << (loaded.ok() ? "no problem" : loaded.problems[0]);
    EXPECT_EQ(loaded.binaries_loaded, 0);
}

}  // namespace
