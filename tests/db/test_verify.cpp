// verify and prune, and the cubin header they read.
#include <gtest/gtest.h>

#include "db/cubin_elf.h"
#include "db/prune.h"
#include "db/stats.h"
#include "db/verify.h"
#include "src/jit/compiler.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

TEST(CubinElf, ReadsTheSmOfARealCubinAndRefusesOtherBytes) {
    EXPECT_EQ(cubin_sm(naive_binary().cubin), 90);
    EXPECT_THROW(cubin_sm({}), Error);
    std::vector<char> not_cuda = naive_binary().cubin;
    not_cuda[18] = 62;  // e_machine: x86-64
    EXPECT_THROW(cubin_sm(not_cuda), Error);
    std::vector<char> other_sm = naive_binary().cubin;
    other_sm[49] = 80;  // e_flags bits 8-15 (ELF ABI version 8)
    EXPECT_EQ(cubin_sm(other_sm), 80);
}

TEST(CubinElf, RefusesACubinCutShortOrWhoseTablesPointPastItsEnd) {
    const std::vector<char> whole = naive_binary().cubin;
    // Cut where a transfer would: anywhere past the header, down to 4-byte boundaries.
    for (const std::size_t kept : {std::size_t{300}, whole.size() / 2, whole.size() - 4, whole.size() - 1}) {
        const std::vector<char> cut(whole.begin(), whole.begin() + kept);
        EXPECT_THROW(cubin_sm(cut), Error) << kept << " of " << whole.size() << " bytes";
    }
    std::vector<char> far_table = whole;
    far_table[40 + 7] = 0x7f;  // e_shoff's top byte: the section headers "at" 2^62
    EXPECT_THROW(cubin_sm(far_table), Error);
    try {
        cubin_sm(std::vector<char>(whole.begin(), whole.begin() + 300));
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cut short"), std::string::npos) << e.what();
    }
}

// Section headers shorter than ELF64's 64 bytes: the symbol table's link and entry size lie
// past such a header's end, and a last header at the file's end was read past the bytes.
TEST(CubinElf, RefusesHeadersShorterThanElf64s) {
    std::vector<char> short_headers = naive_binary().cubin;
    short_headers[58] = 40, short_headers[59] = 0;  // e_shentsize
    try {
        cubin_sm(short_headers);
        FAIL() << "took section headers of 40 bytes";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("section header table's entries are 40 bytes, under an ELF64 header's 64"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(cubin_defines_kernel(short_headers, naive_binary().lowered_name));
}

TEST(CubinElf, FindsAKernelByItsWholeNameInTheSymbolTable) {
    const Binary naive = naive_binary();
    EXPECT_TRUE(cubin_defines_kernel(naive.cubin, naive.lowered_name)) << naive.lowered_name;
    for (const std::string& other : {std::string("foo"), std::string(""), naive.lowered_name + "x",
                                     naive.lowered_name + std::string(1, '\0') + ".nv.info",
                                     naive.lowered_name.substr(0, naive.lowered_name.size() - 1),
                                     naive.lowered_name.substr(1)})
        EXPECT_FALSE(cubin_defines_kernel(naive.cubin, other)) << "'" << other << "'";
}

// A device function is a function symbol too, but no load finds it as a kernel: only symbols
// marked as entry points count.
TEST(CubinElf, ADeviceFunctionIsNoKernel) {
    const StandaloneKernel compiled = compile_standalone(
        "device_function.cu",
        "extern \"C\" __device__ __noinline__ float helper_of_k(float x) { return x * 2.0f; }\n"
        "extern \"C\" __global__ void k(float* p) { p[0] = helper_of_k(p[1]); }\n",
        {}, Arch{90});
    ASSERT_EQ(cubin_sm(compiled.cubin), 90);
    EXPECT_TRUE(cubin_defines_kernel(compiled.cubin, "k"));
    // NVRTC names the kept device function after its kernel, as a local function symbol.
    EXPECT_FALSE(cubin_defines_kernel(compiled.cubin, "$k$helper_of_k"));
    EXPECT_FALSE(cubin_defines_kernel(compiled.cubin, "helper_of_k"));
}

// binary_problem's rules, one at a time: a binary serves a device of its major version at
// its minor version or above, and must name its kernel.
TEST(Verify, ABinaryServesItsMajorVersionFromItsMinorUpAndNamesItsKernel) {
    const Binary sm90 = naive_binary();
    DeviceFingerprint device = h200();
    EXPECT_EQ(binary_problem(sm90, device), "");
    Binary sm86 = sm90;
    sm86.cubin[49] = 86;  // e_flags bits 8-15 (ELF ABI version 8)
    sm86.cubin_checksum = cubin_checksum(sm86.cubin);  // as compiled so
    sm86.arch = 86;
    device.cc_major = 8, device.cc_minor = 6;
    EXPECT_EQ(binary_problem(sm86, device), "");
    device.cc_minor = 9;
    EXPECT_EQ(binary_problem(sm86, device), "") << "an sm_86 binary runs on sm_89";
    device.cc_minor = 0;
    EXPECT_NE(binary_problem(sm86, device).find("cannot run"), std::string::npos) << "an sm_86 binary on sm_80";
    device.cc_major = 9;
    EXPECT_NE(binary_problem(sm86, device).find("cannot run"), std::string::npos) << "an sm_86 binary on sm_90";
    Binary unnamed = sm90;
    unnamed.lowered_name.clear();
    EXPECT_EQ(binary_problem(unnamed, h200()), "it has no kernel name to look up");
    // A name its cubin does not define: loading it would fail every handle on the device.
    Binary misnamed = sm90;
    misnamed.lowered_name = "foo";
    EXPECT_EQ(binary_problem(misnamed, h200()),
              "its cubin defines no kernel named 'foo', the name the row gives to load it by");
}

TEST(Verify, PassesOnADatabaseTheTestsWrote) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    fill_sample(store);
    const VerifyReport r = verify_store(store);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
    EXPECT_EQ(r.winners, 4);
    EXPECT_EQ(r.binaries_checked, 3);
    EXPECT_EQ(r.binaries_loaded, 0);
}

TEST(Verify, LoadsTheBinariesOfTheGpusArchWhenAskedTo) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    fill_sample(store);
    int loads = 0;
    const TryLoad load = [&](const Binary&) { return ++loads == 2 ? std::string("no kernel image") : std::string(); };
    VerifyReport r = verify_store(store, load, 90);
    EXPECT_EQ(loads, 3);
    EXPECT_EQ(r.binaries_loaded, 2);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("loading it on the GPU failed: no kernel image"), std::string::npos) << r.problems[0];
    r = verify_store(store, load, 80);  // another GPU: its cubins are not tried
    EXPECT_EQ(loads, 3);
}

TEST(Verify, FindsABrokenCubinAMissingBinaryAndAnEditedDevice) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = fill_sample(store);
    sqlite::Connection& db = store.connection();
    // Without a checksum, as a binary stored before schema version 4: the ELF check finds it.
    db.exec("UPDATE binaries SET cubin = x'00112233', cubin_checksum = NULL");
    VerifyReport r = verify_store(store);
    EXPECT_EQ(r.problems.size(), 3u) << "each of the three winners that use it";
    EXPECT_NE(r.problems[0].find("its cubin is not an ELF file"), std::string::npos) << r.problems[0];

    db.exec("PRAGMA foreign_keys = OFF; DELETE FROM binaries; PRAGMA foreign_keys = ON");  // as a hand edit would
    r = verify_store(store);
    EXPECT_NE(r.problems.at(0).find("refers to a missing row of binaries"), std::string::npos) << r.problems[0];
    EXPECT_EQ(r.dangling_rows, 0) << "a re-tune mends a missing binary: it is no dangling row";
    bool missing = false;
    for (const std::string& p : r.problems) missing = missing || p.find("is missing") != std::string::npos;
    EXPECT_TRUE(missing);

    db.query("UPDATE devices SET sm_count = 1 WHERE id = ?1").bind(1, id).run();
    r = verify_store(store);
    bool edited = false;
    for (const std::string& p : r.problems) edited = edited || p.find("does not match its id") != std::string::npos;
    EXPECT_TRUE(edited);
}

// A time edited or damaged in the file, which import and merge refuse, is a problem for
// verify too (it said "ok"), for the winner's time and for its cuBLAS time.
TEST(Verify, ReportsATimeNoImportOrMergeTakes) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    fill_sample(store);
    sqlite::Connection& db = store.connection();
    db.exec("UPDATE winners SET ms = 5e-324 WHERE m = 1");
    db.exec("UPDATE winners SET cublas_ms = 1e-9 WHERE m = 4096");
    const VerifyReport r = verify_store(store);
    EXPECT_EQ(r.winners, 4);
    ASSERT_EQ(r.problems.size(), 2u);
    std::string all;
    for (const std::string& p : r.problems) all += p + "\n";
    EXPECT_NE(all.find("M=1 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8: its time is under 0.1 us"), std::string::npos) << all;
    EXPECT_NE(all.find("M=4096 N=4096 K=4096 NN fp32 align16 cuBLAS: its cuBLAS time is under 0.1 us"), std::string::npos)
        << all;
}

// The fastest time is the device's: its SMs at 3.5 GHz, with 128 FMA lanes each for this
// project's kernels in fp32 and tensor cores in tf32, or for cuBLAS on Blackwell, which may
// emulate fp32 on them. 4096^3 in 0.5 ms (275 TFLOPS) is a tf32 time on an H200, not one of an
// fp32 kernel; in 0.2 ms (687 TFLOPS) it is a tf32 time on the H200 but on no GPU of 8 SMs. An
// import of such an fp32 time (10 times the H200's peak) was taken.
TEST(Verify, ATimeFasterThanTheDevicesSmsCouldComputeIsNoTime) {
    const Binary kernel = naive_binary();
    const DeviceFingerprint hopper = h200();
    DeviceFingerprint small = h200();
    small.sm_count = 8;
    for (const GemmPrecision precision : {GemmPrecision::fp32, GemmPrecision::tf32}) {
        ShapeKey key = shape(4096, 4096, 4096);
        key.precision = precision;
        Winner w = winner("d", key, 0.5, &kernel);
        w.cublas_ms = 2.0;
        const std::string at_half_a_ms = winner_time_problem(w, &hopper);
        EXPECT_EQ(at_half_a_ms.empty(), precision == GemmPrecision::tf32) << at_half_a_ms;
        w.ms = 0.2;
        EXPECT_EQ(winner_time_problem(w, &hopper).empty(), precision == GemmPrecision::tf32);
        EXPECT_FALSE(winner_time_problem(w, &small).empty());
    }
    Winner fp32 = winner("d", shape(4096, 4096, 4096), 0.5, &kernel);
    fp32.cublas_ms = 2.0;
    EXPECT_EQ(winner_time_problem(fp32, &hopper),
              "its time would be 275 TFLOPS, more than 132 SMs could compute (118 TFLOPS by FFMA at 3.5 GHz)");
    // Where the device row was edited, its SM count is no measure: only the other bounds hold.
    EXPECT_EQ(winner_time_problem(fp32, nullptr), "");
    fp32.ms = 5e-5;
    EXPECT_EQ(winner_time_problem(fp32, nullptr), "its time is under 0.1 us, shorter than any launch");

    // cuBLAS's time on Blackwell is judged by its tensor cores; on Hopper by FFMA.
    DeviceFingerprint blackwell = hopper;
    blackwell.gpu_name = "NVIDIA B200";
    blackwell.cc_major = 10;
    blackwell.sm_count = 148;
    Winner cublas = winner("d", shape(8192, 8192, 8192), 6.3, nullptr);  // 175 TFLOPS
    cublas.cublas_ms = 6.3;
    EXPECT_EQ(winner_time_problem(cublas, &blackwell), "");
    EXPECT_NE(winner_time_problem(cublas, &hopper), "");
    Winner kernel_there = winner("d", shape(8192, 8192, 8192), 6.3, &kernel);
    kernel_there.cublas_ms = 16.7;
    EXPECT_NE(winner_time_problem(kernel_there, &blackwell), "") << "an FFMA kernel at 175 TFLOPS on 148 SMs";

    // Past what a long can count, the figure is still a number.
    Winner huge = winner("d", shape(2000000000, 2000000000, 2000000000), 1.0, &kernel);
    const std::string why = winner_time_problem(huge, &hopper);
    EXPECT_NE(why.find("would be 1.6e+19 TFLOPS"), std::string::npos) << why;
}

// An edited device row's winners are found by no lookup, which verify reports; they are still
// counted and their binaries checked, under the id the row is stored under. The summary
// counted 0 winners for such a row, and a damaged binary of its winners went unreported.
TEST(Verify, CountsAndChecksTheWinnersOfAnEditedDeviceRow) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = fill_sample(store);
    sqlite::Connection& db = store.connection();
    // An SM count edited down too, past what the winners' times allow: the times are not
    // blamed for it (they were, with the advice to tune the shapes again).
    db.query("UPDATE devices SET library_version = '9.9.9', sm_count = 2 WHERE id = ?1").bind(1, id).run();
    VerifyReport r = verify_store(store);
    EXPECT_EQ(r.devices, 1);
    EXPECT_EQ(r.winners, 4) << "three naive winners and one cuBLAS";
    EXPECT_EQ(r.binaries_checked, 3);
    EXPECT_EQ(r.edited_device_rows, 1);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("does not match its id"), std::string::npos) << r.problems[0];

    db.exec("UPDATE binaries SET cubin = x'00112233', cubin_checksum = NULL");
    r = verify_store(store);
    ASSERT_EQ(r.problems.size(), 4u) << "the edited row, and each of the three winners that use the binary";
    for (std::size_t i = 1; i < r.problems.size(); ++i)
        EXPECT_NE(r.problems[i].find("its cubin is not an ELF file"), std::string::npos) << r.problems[i];
}

// A cubin damaged inside, its ELF headers whole: only the checksum stored with it tells.
TEST(Verify, FindsACubinDamagedInsideAWholeElfByItsChecksum) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    fill_sample(store);
    const Binary stored = *store.find_binary(naive_binary().cache_key);
    EXPECT_EQ(stored.cubin_checksum, cubin_checksum(naive_binary().cubin)) << "stored as to_binary made it";
    // A binary of the tuner's cache, which no winner names.
    Binary cached = naive_binary();
    cached.cache_key = "cached";
    store.put_binary(cached);
    EXPECT_EQ(verify_store(store).problems.size(), 0u);

    Binary damaged = stored;
    damaged.cubin[damaged.cubin.size() / 2] ^= 0x5a;  // past the ELF header, inside its sections
    damaged.cubin_checksum.clear();
    EXPECT_EQ(cubin_problem(damaged), "") << "the ELF alone reads whole";
    store.connection()
        .query("UPDATE binaries SET cubin = ?1 WHERE cache_key = ?2")
        .bind(1, damaged.cubin)
        .bind(2, stored.cache_key)
        .run();
    std::vector<char> cached_damaged = cached.cubin;
    cached_damaged[cached_damaged.size() / 2] ^= 0x5a;
    store.connection()
        .query("UPDATE binaries SET cubin = ?1 WHERE cache_key = ?2")
        .bind(1, cached_damaged)
        .bind(2, cached.cache_key)
        .run();
    const VerifyReport r = verify_store(store);
    ASSERT_EQ(r.problems.size(), 4u) << "the cached binary, and each of the three winners that use the other";
    for (const std::string& problem : r.problems)
        EXPECT_NE(problem.find("its cubin does not match the checksum stored with it"), std::string::npos) << problem;
    EXPECT_NE(r.problems[0].find("cached binary " + cached.cache_key), std::string::npos) << r.problems[0];
}

// Configurations that share a binary (split counts on the same side of 1) file it under the
// first of them; the database alone checks only that the binary is of the winner's family
// and template: a winner with other parameters passes, a binary of another family does not.
TEST(Verify, AcceptsASharedBinaryButNotAnotherFamilys) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    const Binary binary = naive_binary();
    store.put_binary(binary);
    Winner w = winner(id, shape(8, 64, 64), 0.5, &binary);
    w.kernel.params.back() += 1;  // as a split count would differ
    w.kernel.description += " (other parameters)";
    store.put_winner(w);
    VerifyReport r = verify_store(store);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);

    w.kernel.family = "smem";
    w.kernel.description = "smem TILE=32";
    store.put_winner(w);
    r = verify_store(store);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.problems[0].find("another kernel family"), std::string::npos) << r.problems[0];
}

// The schema's sizes are 64-bit: a row edited past int was read back wrapped (2^32 + 8 as
// 8) and matched the calls of M = 8. Reading refuses it; verify names it.
TEST(Verify, ASizePastIntIsRefusedNotWrapped) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    store.put_winner(winner(id, shape(8, 64, 64), 0.5, nullptr));
    store.connection().query("UPDATE winners SET m = 4294967304").run();
    EXPECT_THROW(store.winners(id), DbError);
    const VerifyReport r = verify_store(store);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("holds M=4294967304 N=64 K=64"), std::string::npos) << r.problems[0];
}

// A size column takes any value: 8.5 or '8x' edited in was read as 8, a second winner for
// M = 8 that verify passed and export wrote, and import refused the file for it. Reading
// refuses it; verify names it.
TEST(Verify, ASizeThatIsNoWholeNumberIsRefusedNotTruncated) {
    struct Edit {
        const char* sql;    // the value, as the UPDATE writes it
        const char* shown;  // as the messages quote it
    };
    for (const Edit& edit : {Edit{"8.5", "8.5"}, Edit{"'8x'", "8x"}}) {
        TempDir dir;
        TuningStore store(dir.file("t.db"));
        const std::string id = store.add_device(h200());
        store.put_winner(winner(id, shape(8, 64, 64), 0.5, nullptr));
        store.put_winner(winner(id, shape(9, 64, 64), 0.5, nullptr));
        store.connection().query(std::string("UPDATE winners SET n = ") + edit.sql + " WHERE m = 9").run();
        try {
            store.winners(id);
            ADD_FAILURE() << edit.sql << " was read";
        } catch (const DbError& e) {
            EXPECT_NE(std::string(e.what()).find("a row holds the size '" + std::string(edit.shown) + "', not a whole number"),
                      std::string::npos)
                << e.what();
        }
        const VerifyReport r = verify_store(store);
        ASSERT_EQ(r.problems.size(), 1u) << edit.sql;
        EXPECT_NE(r.problems[0].find("holds M=9 N=" + std::string(edit.shown) + " K=64"), std::string::npos) << r.problems[0];
    }
}

// A cached binary no winner names is checked too: cut short, it used to pass verify and
// crash every later tune that met it in the cache.
TEST(Verify, ReportsADamagedCachedBinaryNoWinnerNames) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    store.add_device(h200());
    const Binary binary = naive_binary();
    store.put_binary(binary);
    VerifyReport r = verify_store(store);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
    EXPECT_EQ(r.binaries_checked, 1);

    // Without its checksum, as a binary stored before schema version 4: the ELF check finds it.
    store.connection().query("UPDATE binaries SET cubin = substr(cubin, 1, length(cubin) / 2), cubin_checksum = NULL").run();
    r = verify_store(store);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("cached binary " + binary.cache_key + ": its cubin is cut short"), std::string::npos)
        << r.problems[0];
}

// Whether a binary is the winner's own instantiation is the families' call: the check
// given to verify_store runs on every winner with a readable binary, with its device's sm.
TEST(Verify, ReportsWhatTheMismatchCheckSays) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    const Binary binary = naive_binary();
    store.put_binary(binary);
    store.put_winner(winner(id, shape(8, 64, 64), 0.5, &binary));
    store.put_winner(winner(id, shape(9, 64, 64), 0.5, &binary));
    std::vector<int> sms;
    const KernelProblem kernel_problem = [&](const Winner& w, const DeviceFingerprint& device) -> std::string {
        sms.push_back(device.sm());
        return w.shape.M == 9 ? "not its own" : "";
    };
    const VerifyReport r = verify_store(store, {}, 0, kernel_problem);
    EXPECT_EQ(sms, (std::vector<int>{90, 90}));
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("M=9"), std::string::npos) << r.problems[0];
    EXPECT_NE(r.problems[0].find("not its own"), std::string::npos) << r.problems[0];
}

TEST(Prune, RemovingADeviceRemovesItsRowsOnly) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = fill_sample(store);
    const std::string other = store.add_device(h200(1));
    store.put_winner(winner(other, shape(1, 1, 1), 1, nullptr));
    const PruneSummary s = prune_devices(store, {id});
    EXPECT_EQ(s.devices, 1);
    EXPECT_EQ(s.winners, 4);
    EXPECT_EQ(s.measurements, 4);
    EXPECT_EQ(s.misses, 2);
    EXPECT_TRUE(store.winners(id).empty());
    EXPECT_TRUE(store.measurements(id).empty());
    EXPECT_TRUE(store.misses(id).empty());
    EXPECT_EQ(store.winners(other).size(), 1u);
    EXPECT_TRUE(store.find_binary(naive_binary().cache_key)) << "the cache is not per device";
}

TEST(Prune, StaleRemovesOtherLibraryVersionsAndTheCacheNothingCanUse) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string current = fill_sample(store);
    DeviceFingerprint old = h200();
    old.library_version = "0.0.1";
    old.nvrtc_version = "12.4";
    const std::string old_id = store.add_device(old);
    Binary old_binary = naive_binary();
    old_binary.cache_key = "built-by-nvrtc-12.4";
    old_binary.nvrtc_version = "12.4";
    old_binary.kernel.template_hash = "an older template";
    store.put_binary(old_binary);
    store.put_winner(winner(old_id, shape(1, 4096, 4096), 0.5, &old_binary));

    const PruneSummary s = prune_stale(store, {naive_binary().kernel.template_hash});
    EXPECT_EQ(s.devices, 1);
    EXPECT_EQ(s.winners, 1);
    EXPECT_EQ(s.binaries, 1);
    EXPECT_EQ(s.kernels, 1);
    EXPECT_FALSE(store.find_device(old_id));
    EXPECT_FALSE(store.find_binary("built-by-nvrtc-12.4"));
    EXPECT_EQ(store.winners(current).size(), 4u);
    EXPECT_TRUE(verify_store(store).ok());
    const PruneSummary again = prune_stale(store, {naive_binary().kernel.template_hash});
    EXPECT_EQ(again.devices + again.binaries + again.kernels, 0);
}

// prune counts kernels as stats does: the cuBLAS row, which stands for no kernel of ours, is
// not counted, and so it stays when its last winner goes (it used to go uncounted: stats said
// 0 kernels, prune removed 1, and a prune that removed only it reported nothing changed).
TEST(Prune, CountsKernelsAsStatsDoes) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    DeviceFingerprint old = h200();
    old.library_version = "0.0.1";
    store.put_winner(winner(store.add_device(old), shape(1, 4096, 4096), 0.5, nullptr));  // cuBLAS
    EXPECT_EQ(store_stats(store).kernels, 0);
    const PruneSummary s = prune_stale(store, {naive_binary().kernel.template_hash});
    EXPECT_EQ(s.winners, 1);
    EXPECT_EQ(s.kernels, 0);
    EXPECT_EQ(store.connection().integer("SELECT count(*) FROM kernels WHERE family = 'cublas'"), 1)
        << "the cuBLAS row stays";
    EXPECT_TRUE(prune_stale(store, {naive_binary().kernel.template_hash}).changed_nothing());
    EXPECT_EQ(store.connection().integer("SELECT count(*) FROM kernels WHERE family = 'cublas'"), 1);
}

// A binary of older kernel templates is never looked up again (the templates are part of its
// cache key) unless a remaining device's tuning used them (a newer build's, sharing the
// file): it goes, where it used to stay as long as its NVRTC version was a device's. The
// build has a hash per family: a binary of any of them stays.
TEST(Prune, StaleRemovesTheCacheOfTemplatesNoBuildLeftUses) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = fill_sample(store);
    const std::string current = naive_binary().kernel.template_hash;
    Binary older = naive_binary(), newer = naive_binary(), other_family = naive_binary();
    older.cache_key = "older templates", older.kernel.template_hash = "older";
    newer.cache_key = "a newer build's templates", newer.kernel.template_hash = "newer";
    other_family.cache_key = "another family's templates", other_family.kernel.template_hash = "other family";
    store.put_binary(older);
    store.put_binary(newer);
    store.put_binary(other_family);
    Measurement by_newer = measurement(id, shape(2, 64, 64), 0.5);
    by_newer.kernel = newer.kernel;
    store.record_measurement(by_newer);

    const PruneSummary s = prune_stale(store, {current, "other family"});
    EXPECT_EQ(s.binaries, 1);
    EXPECT_FALSE(store.find_binary("older templates"));
    EXPECT_TRUE(store.find_binary("a newer build's templates"));
    EXPECT_TRUE(store.find_binary(naive_binary().cache_key)) << "this build's";
    EXPECT_TRUE(store.find_binary("another family's templates")) << "this build's, of another family";
    EXPECT_TRUE(verify_store(store).ok());
}

// A newer build may share the file: an older tool's prune must not take its tuning away.
// Versions compare by number ("0.10.0" is newer than "0.2.0"), before a pre-release's or a
// build's suffix (a pre-release of 0.3.0 was pruned as text); text that is no version is no
// build's.
TEST(Prune, StaleKeepsNewerLibraryVersions) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    std::vector<std::string> newer, older;
    for (const char* version : {"0.10.0", "1.0.0", "0.2.1", "0.3.0-dev", "0.2.0+local"}) {
        DeviceFingerprint d = h200();
        d.library_version = version;
        newer.push_back(store.add_device(d));
        store.put_winner(winner(newer.back(), shape(1, 4096, 4096), 0.5, nullptr));
    }
    // Text no build writes, whatever its numbers: "1.0" and "0.2" would rank by their count
    // against "0.2.0", one above it and one below.
    for (const char* version : {"0.1.9", "0.1", "next", "", "0.1.9-rc1", "-1", "1.0", "0.2", "00.3.0"}) {
        DeviceFingerprint d = h200();
        d.library_version = version;
        older.push_back(store.add_device(d));
    }
    const PruneSummary s = prune_stale(store, {naive_binary().kernel.template_hash}, "0.2.0");
    EXPECT_EQ(s.devices, 9);
    EXPECT_EQ(s.newer_kept, 5);
    for (const std::string& id : newer) EXPECT_EQ(store.winners(id).size(), 1u) << id;
    for (const std::string& id : older) EXPECT_FALSE(store.find_device(id)) << id;
}

// A device row edited by hand keeps an id that its fields no longer give. Prune deleted by
// the id the fields give, which matched no row: an older version's edited row stayed, its
// rows with it, and the prune reported nothing removed. An edited row of this version is
// no older build's: it stays (verify reports it).
TEST(Prune, StaleRemovesAnOlderDeviceRowEditedByHandAndStatsCountsItsRows) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string current = fill_sample(store);
    DeviceFingerprint old = h200();
    old.library_version = "0.0.1";
    const std::string old_id = store.add_device(old);
    store.put_winner(winner(old_id, shape(1, 4096, 4096), 0.5, nullptr));
    store.connection().exec("UPDATE devices SET gpu_name = 'NVIDIA H200 (relabelled)'");
    ASSERT_EQ(store.edited_device_rows().size(), 2u);
    // stats counts each row's winners under the id they name (it counted 0 for both).
    std::int64_t counted = 0;
    for (const DeviceStats& d : store_stats(store).devices) counted += d.winners;
    EXPECT_EQ(counted, 5);

    const PruneSummary s = prune_stale(store, {naive_binary().kernel.template_hash});
    EXPECT_EQ(s.devices, 1);
    EXPECT_EQ(s.winners, 1);
    EXPECT_EQ(store.connection().integer("SELECT count(*) FROM devices WHERE id = '" + old_id + "'"), 0);
    EXPECT_EQ(store.winners(current).size(), 4u) << "this version's edited row stays";
    EXPECT_EQ(store.edited_device_rows().size(), 1u);
}

TEST(Stats, CountsRowsAndTheCacheHitRate) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = fill_sample(store);
    store.find_binary(naive_binary().cache_key);
    store.find_binary(naive_binary().cache_key);
    store.find_binary(naive_binary().cache_key);
    const StoreStats s = store_stats(store);
    EXPECT_EQ(s.binaries, 1);
    EXPECT_EQ(s.binary_hits, 3);
    EXPECT_DOUBLE_EQ(s.hit_rate(), 0.75);
    EXPECT_EQ(s.kernels, 1);
    EXPECT_GT(s.file_bytes, 0);
    ASSERT_EQ(s.devices.size(), 1u);
    EXPECT_EQ(s.devices[0].id, id);
    EXPECT_EQ(s.devices[0].winners, 4);
    EXPECT_EQ(s.devices[0].cublas_winners, 1);
    EXPECT_EQ(s.devices[0].measurements, 4);
    EXPECT_EQ(s.devices[0].invalid_measurements, 1);
    EXPECT_EQ(s.devices[0].missed_shapes, 2);
    EXPECT_EQ(s.devices[0].misses, 6);
}
