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

VerifyReport verify_on_gpu(TuningStore& store, const DeviceInfo& device) {
    const auto mismatch = [](const Winner& w, int sm) { return binary_mismatch(w, Arch{sm}); };
    return verify_store(store, binary_load_failure, device.sm(), mismatch);
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
// merged database could pair them): its main kernel loads, its tail does not, and verify
// says so.
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
    const VerifyReport r = verify_on_gpu(store, gpu->device);
    bool load_failed = false;
    for (const std::string& p : r.problems) load_failed = load_failed || p.find("loading it on the GPU failed") != std::string::npos;
    EXPECT_TRUE(load_failed) << (r.problems.empty() ? "no problem reported" : r.problems[0]);
}

}  // namespace
