// The store's reads and writes, on real files.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "db/merge.h"
#include "db/prune.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

TEST(Store, DevicesAreKeyedByTheirWholeFingerprint) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string a = store.add_device(h200());
    EXPECT_EQ(store.add_device(h200()), a) << "adding twice is one device";
    const std::string b = store.add_device(h200(1));  // another driver: another device
    EXPECT_NE(a, b);
    EXPECT_EQ(a.size(), 16u);
    ASSERT_EQ(store.devices().size(), 2u);
    ASSERT_TRUE(store.find_device(b));
    EXPECT_EQ(store.find_device(b)->driver_version, 13010);
    EXPECT_EQ(store.find_device(b)->id(), b);
    EXPECT_FALSE(store.find_device("0123456789abcdef"));
}

// After an upgrade of sgemm, the driver, CUDA or NVRTC the same GPU is another device: its
// earlier builds are found, each named by what differs; a newer build (another machine's, or
// a newer sgemm sharing the file), another GPU and the GPU itself are not.
TEST(Store, EarlierBuildsOfTheSameGpuAreFoundAndNamedByWhatDiffers) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const DeviceFingerprint gpu = h200(1);  // driver 13.1
    store.add_device(gpu);
    DeviceFingerprint older_sgemm = gpu;
    older_sgemm.library_version = "0.3.0";
    const std::string older_id = store.add_device(older_sgemm);
    const DeviceFingerprint older_driver = h200();  // driver 13.0
    const std::string driver_id = store.add_device(older_driver);
    DeviceFingerprint newer_sgemm = gpu;
    newer_sgemm.library_version = "9.0.0";
    store.add_device(newer_sgemm);
    DeviceFingerprint mixed = older_driver;  // an older driver, but a newer CUDA: no earlier build
    mixed.runtime_version = 13010;
    store.add_device(mixed);
    DeviceFingerprint h100 = older_sgemm;
    h100.gpu_name = "NVIDIA H100 80GB HBM3";  // as many SMs: the name tells them apart
    store.add_device(h100);
    DeviceFingerprint fewer_sms = older_sgemm;  // a MIG slice reports the same name with fewer SMs
    fewer_sms.sm_count = 16;
    store.add_device(fewer_sms);

    EXPECT_TRUE(same_gpu(gpu, newer_sgemm));
    EXPECT_FALSE(same_gpu(gpu, h100));
    EXPECT_FALSE(same_gpu(gpu, fewer_sms));
    EXPECT_FALSE(earlier_build(gpu, gpu)) << "a build is not earlier than itself";
    EXPECT_TRUE(earlier_build(gpu, newer_sgemm));
    DeviceFingerprint unversioned = gpu;  // as prune --stale takes it: older
    unversioned.library_version = "next";
    EXPECT_TRUE(earlier_build(unversioned, gpu));
    std::map<std::string, std::string> labels;
    for (const TuningStore::DeviceRow& row : earlier_builds_of(store, gpu)) labels[row.stored_id] = earlier_build_label(row, gpu);
    ASSERT_EQ(labels.size(), 2u);
    EXPECT_EQ(labels[older_id], "device " + older_id.substr(0, 8) + " (sgemm 0.3.0)");
    EXPECT_EQ(labels[driver_id], "device " + driver_id.substr(0, 8) + " (driver 13.0)");

    DeviceFingerprint everything = gpu;
    everything.runtime_version = 12080;
    everything.nvrtc_version = "12.8";
    everything.memory_bytes += 1 << 20;
    EXPECT_EQ(build_differences(everything, gpu), "CUDA 12.8, NVRTC 12.8, " + std::to_string(everything.memory_bytes) +
                                                       " bytes of memory");
    EXPECT_TRUE(earlier_builds_of(store, h100).empty()) << "the H100 has no earlier build here";
}

// Paths reach SQLite as URIs: one that begins with two slashes (the default path when
// HOME=/) or holds a character URIs give a meaning to is still the file it names.
TEST(Store, PathsWithLeadingSlashesOrUriCharactersOpenTheFileTheyName) {
    TempDir dir;
    for (const std::string& path : {"/" + dir.file("home.db"), dir.file("50% ?#.db")}) {
        {
            TuningStore store(path);
            store.add_device(h200());
        }
        ASSERT_TRUE(std::filesystem::exists(path)) << path;
        EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).devices().size(), 1u) << path;
    }
}

TEST(Store, ResolvesADeviceByIdOrUniquePrefix) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string a = store.add_device(h200());
    EXPECT_EQ(store.resolve_device(a), a);
    EXPECT_EQ(store.resolve_device(a.substr(0, 6)), a);
    try {
        store.resolve_device("zz");
        FAIL();
    } catch (const UnknownDeviceError& e) {
        EXPECT_NE(std::string(e.what()).find(a), std::string::npos) << "lists the devices: " << e.what();
    }
    store.add_device(h200(1));
    EXPECT_THROW(store.resolve_device(""), UnknownDeviceError) << "an empty prefix names every device";
}

// A prefix of several devices lists those it names, to pick from, not every device.
TEST(Store, APrefixOfSeveralDevicesListsThoseItNames) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    // 17 ids of 16 first digits: two share one.
    std::map<char, std::vector<std::string>> by_first_digit;
    for (int variant = 0; variant < 17; ++variant) {
        const std::string id = store.add_device(h200(variant));
        by_first_digit[id[0]].push_back(id);
    }
    const auto shared = std::find_if(by_first_digit.begin(), by_first_digit.end(),
                                     [](const auto& digit) { return digit.second.size() > 1; });
    ASSERT_NE(shared, by_first_digit.end());
    try {
        store.resolve_device(std::string(1, shared->first));
        FAIL() << "a prefix of several devices named one";
    } catch (const UnknownDeviceError& e) {
        const std::string why = e.what();
        EXPECT_NE(why.find("names several devices"), std::string::npos) << why;
        for (const auto& [digit, ids] : by_first_digit)
            for (const std::string& id : ids)
                EXPECT_EQ(why.find(id) != std::string::npos, digit == shared->first) << id << " in: " << why;
    }
}

TEST(Store, BinaryCacheStoresTheCubinAndCountsHits) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const Binary b = naive_binary();
    EXPECT_TRUE(store.put_binary(b));
    EXPECT_FALSE(store.put_binary(b)) << "a known key is kept";
    EXPECT_FALSE(store.find_binary("no such key"));
    const std::optional<Binary> found = store.find_binary(b.cache_key);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->cubin, b.cubin);
    EXPECT_EQ(found->lowered_name, b.lowered_name);
    EXPECT_EQ(found->kernel, b.kernel);
    EXPECT_EQ(found->arch, 90);
    EXPECT_EQ(found->registers, b.registers);
    EXPECT_EQ(found->hits, 1);
    EXPECT_EQ(store.find_binary(b.cache_key)->hits, 2);
}

// A binary kept from before checksums takes the checksum that comes with the same bytes
// (from a fresh compile, an import or a merge).
TEST(Store, ABinaryKeptWithoutAChecksumTakesTheOneThatComesWithTheSameCubin) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    Binary legacy = naive_binary();
    legacy.cubin_checksum.clear();
    ASSERT_TRUE(store.put_binary(legacy));
    EXPECT_FALSE(store.put_binary(naive_binary())) << "still the same binary, not a new one";
    EXPECT_EQ(store.find_binary(legacy.cache_key)->cubin_checksum, naive_binary().cubin_checksum);
    EXPECT_EQ(store.find_binary(legacy.cache_key)->cubin, legacy.cubin);
}

// One key is one compile's inputs, so two cubins under it mean one was damaged. A binary
// vouched for by its checksum replaces a kept row that its own checksum shows damaged, or
// that has none and other bytes: an import or a merge used to keep such a row and attach its
// winners to bytes it never checked. A vouched row is kept against other bytes, and so is an
// unvouched one against other unvouched bytes: nothing says which is right. A damaged row is
// kept against its own bytes without a checksum, which would only erase the evidence.
TEST(Store, AVouchedBinaryReplacesAKeptRowThatIsDamagedOrUnvouchedWithOtherBytes) {
    const Binary good = naive_binary();
    Binary damaged_inside = good;
    damaged_inside.cubin[damaged_inside.cubin.size() / 2] ^= 0x5a;  // past the ELF header
    Binary unvouched_other = damaged_inside;
    unvouched_other.cubin_checksum.clear();
    Binary vouched_other = damaged_inside;
    vouched_other.cubin_checksum = cubin_checksum(vouched_other.cubin);
    Binary unvouched_good = good;
    unvouched_good.cubin_checksum.clear();
    struct Case {
        const char* what;
        Binary kept, incoming;
        bool replaced;
    };
    for (const Case& c : {Case{"kept without a checksum, other bytes", unvouched_other, good, true},
                          Case{"kept with a checksum its bytes fail", damaged_inside, good, true},
                          Case{"kept vouched, other vouched bytes", vouched_other, good, false},
                          Case{"kept without a checksum, other bytes without one", unvouched_other, unvouched_good, false},
                          Case{"kept with a checksum its bytes fail, the same bytes without one", damaged_inside,
                               unvouched_other, false}}) {
        SCOPED_TRACE(c.what);
        TempDir dir;
        TuningStore store(dir.file("t.db"));
        ASSERT_TRUE(store.put_binary(c.kept));
        EXPECT_EQ(store.put_binary(c.incoming), c.replaced);
        const std::optional<Binary> stored = store.find_binary(good.cache_key);
        ASSERT_TRUE(stored);
        const Binary& expected = c.replaced ? c.incoming : c.kept;
        EXPECT_EQ(stored->cubin, expected.cubin);
        EXPECT_EQ(stored->cubin_checksum, expected.cubin_checksum);
    }
}

TEST(Store, ReadOnlyStoreReadsButDoesNotCountHits) {
    TempDir dir;
    const std::string path = dir.file("t.db");
    {
        TuningStore store(path);
        store.put_binary(naive_binary());
    }
    TuningStore reader(path, OpenMode::ReadOnly);
    ASSERT_TRUE(reader.find_binary(naive_binary().cache_key));
    EXPECT_EQ(reader.find_binary(naive_binary().cache_key)->hits, 0);
    EXPECT_THROW(reader.add_device(h200()), DbError);
}

// A reader who may write the file reads it in place and, closing last, removes the -wal and
// -shm files, as a writer does: a read-only connection left them beside the database after
// every `sgemm-db list`. While a writer is open they are its, and stay.
TEST(Store, AReaderClosingLastLeavesNoFilesBesideTheDatabase) {
    TempDir dir;
    const std::string path = dir.file("t.db");
    const auto beside = [&] { return std::filesystem::exists(path + "-wal") || std::filesystem::exists(path + "-shm"); };
    {
        TuningStore store(path);
        store.add_device(h200());
    }
    ASSERT_FALSE(beside());
    {
        TuningStore reader(path, OpenMode::ReadOnly);
        EXPECT_EQ(reader.devices().size(), 1u);
        EXPECT_THROW(reader.add_device(h200(1)), DbError);
    }
    EXPECT_FALSE(beside()) << "a reader left SQLite's files beside the database";
    {
        TuningStore writer(path);
        writer.add_device(h200(1));  // committed into the -wal file
        {
            TuningStore reader(path, OpenMode::ReadOnly);
            EXPECT_EQ(reader.devices().size(), 2u) << "the reader in place sees the writer's commits";
        }
        EXPECT_TRUE(std::filesystem::exists(path + "-wal")) << "a reader removed the open writer's -wal file";
        EXPECT_EQ(writer.devices().size(), 2u);
    }
    EXPECT_FALSE(beside());
    EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).devices().size(), 2u);
}

// A snapshot (the read of a user who may not write the file) copies the database into memory,
// read-only, and leaves nothing beside it. While a writer is at work it sees the file as of
// the last checkpoint: the writer's commits since then wait in its -wal file.
TEST(Store, ASnapshotReadsTheFileAsCheckpointedAndLeavesNothingBesideIt) {
    TempDir dir;
    const std::string path = dir.file("t.db");
    {
        TuningStore store(path);
        store.add_device(h200());
    }
    ASSERT_FALSE(std::filesystem::exists(path + "-shm"));
    const auto devices_in_snapshot = [&] {
        sqlite::Connection snapshot(path, sqlite::Access::Snapshot, std::chrono::milliseconds(100));
        EXPECT_TRUE(snapshot.read_only());
        EXPECT_THROW(snapshot.exec("DELETE FROM devices"), DbError) << "a write changed the copy alone";
        return snapshot.integer("SELECT count(*) FROM devices");
    };
    EXPECT_EQ(devices_in_snapshot(), 1);
    EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
    {
        TuningStore writer(path);
        writer.add_device(h200(1));  // committed into the -wal file
        EXPECT_EQ(devices_in_snapshot(), 1);
    }
    EXPECT_EQ(devices_in_snapshot(), 2) << "the writer's close checkpoints its commits into the file";
}

// A reader who may not write the file (another user: the tests run as root in CI) reads it from
// the in-memory copy, binaries included, counting no hits and leaving no file beside it.
TEST(Store, AReaderWhoMayNotWriteTheFileReadsItsBinariesFromACopy) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to read the file as another user";
    TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 01777), 0);
    const std::string path = dir.file("t.db");
    {
        TuningStore store(path);
        store.put_binary(naive_binary());
    }
    ASSERT_EQ(::chown(path.c_str(), 65533, static_cast<gid_t>(-1)), 0);
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Exit status: 0 read as expected, 1 a wrong answer, 2 an exception, 3 no other user.
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
        try {
            TuningStore reader(path, OpenMode::ReadOnly);
            const std::optional<Binary> b = reader.find_binary(naive_binary().cache_key);
            const bool clean = !std::filesystem::exists(path + "-shm") && !std::filesystem::exists(path + "-wal");
            ::_exit(b && b->hits == 0 && clean ? 0 : 1);
        } catch (...) {
            ::_exit(2);
        }
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a wrong answer or files left beside it, 2: an exception, 3: no setuid";
    EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).find_binary(naive_binary().cache_key)->hits, 0);
}

TEST(Store, MeasurementsComeBackValidFastestFirstThenInvalid) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    const ShapeKey s = shape(8, 4096, 4096);
    Measurement bad = measurement(id, s, 0.1);
    bad.valid = false;
    bad.invalid_reason = "NaN in the output";
    store.record_measurement(bad);
    store.record_measurement(measurement(id, s, 0.3));
    store.record_measurement(measurement(id, s, 0.2));
    store.record_measurement(measurement(id, shape(1, 4096, 4096), 0.01));  // another shape
    const std::vector<Measurement> rows = store.measurements(id, s);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_DOUBLE_EQ(*rows[0].median_ms, 0.2);
    EXPECT_DOUBLE_EQ(*rows[1].median_ms, 0.3);
    EXPECT_FALSE(rows[2].valid);
    EXPECT_EQ(rows[2].invalid_reason, "NaN in the output");
    EXPECT_NEAR(*rows[0].tflops, 2.0 * 8 * 4096 * 4096 / 0.2e-3 / 1e12, 1e-9) << "the database computes TFLOPS";
    EXPECT_EQ(rows[0].sm_clock_mhz, 1980);
    EXPECT_FALSE(rows[0].measured_at.empty());
    EXPECT_EQ(store.measurements().size(), 4u);
    EXPECT_TRUE(store.has_measurement(rows[0]));
    Measurement other = rows[0];
    other.runs += 1;
    EXPECT_FALSE(store.has_measurement(other));
}

// The check's scaled errors come back as stored, and absent where a run was not judged
// (a candidate refused before timing).
TEST(Store, AMeasurementKeepsTheChecksScaledErrorsOrNone) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    const ShapeKey s = shape(8, 4096, 4096);
    store.record_measurement(measurement(id, s, 0.2));
    Measurement refused = measurement(id, s, 0);
    refused.median_ms = refused.min_ms = refused.max_ms = std::nullopt;
    refused.max_error_u = refused.rms_error_u = std::nullopt;
    refused.valid = false;
    refused.invalid_reason = "does not compile";
    store.record_measurement(refused);
    const std::vector<Measurement> rows = store.measurements(id, s);
    ASSERT_EQ(rows.size(), 2u);
    ASSERT_TRUE(rows[0].max_error_u && rows[0].rms_error_u);
    EXPECT_DOUBLE_EQ(*rows[0].max_error_u, 3.25);
    EXPECT_DOUBLE_EQ(*rows[0].rms_error_u, 0.4375);
    EXPECT_FALSE(rows[1].max_error_u);
    EXPECT_FALSE(rows[1].rms_error_u);
    // The shell's view shows them.
    sqlite::Connection db(dir.file("t.db"), sqlite::Access::QueryOnly, std::chrono::milliseconds(0));
    auto view = db.query("SELECT max_error_u, rms_error_u FROM measurements_summary WHERE verdict = 'valid'");
    ASSERT_TRUE(view.step());
    EXPECT_DOUBLE_EQ(view.real(0), 3.25);
    EXPECT_DOUBLE_EQ(view.real(1), 0.438);  // rounded to three places
}

TEST(Store, AnInvalidMeasurementNeedsAReason) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    Measurement m = measurement(store.add_device(h200()), shape(1, 1, 1), 1);
    m.valid = false;
    EXPECT_THROW(store.record_measurement(m), DbError);
    EXPECT_TRUE(store.measurements().empty());
}

TEST(Store, AMeasurementOfAnUnknownDeviceIsRefused) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    EXPECT_THROW(store.record_measurement(measurement("0000000000000000", shape(1, 1, 1), 1)), DbError);
}

TEST(Store, AWinnerReplacesTheShapesEarlierWinnerAndComesWithItsBinary) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    const Binary b = naive_binary();
    store.put_binary(b);
    const ShapeKey s = shape(8, 4096, 4096);
    store.put_winner(winner(id, s, 0.9, nullptr));
    store.put_winner(winner(id, s, 0.5, &b));
    store.put_winner(winner(id, shape(4096, 4096, 4096), 0.7, nullptr));
    const std::vector<Winner> all = store.winners(id);
    ASSERT_EQ(all.size(), 2u);
    const std::optional<Winner> w = store.find_winner(id, s);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->kernel, b.kernel);
    EXPECT_DOUBLE_EQ(w->ms, 0.5);
    EXPECT_DOUBLE_EQ(w->speedup, 2.0);
    EXPECT_FALSE(w->tuned_at.empty());
    const std::vector<WinnerWithBinary> loaded = store.winners_with_binaries(id);
    ASSERT_EQ(loaded.size(), 2u);
    for (const WinnerWithBinary& wb : loaded) {
        EXPECT_EQ(wb.binary.has_value(), !wb.winner.kernel.is_cublas());
        if (wb.binary) {
            EXPECT_EQ(wb.binary->cubin, b.cubin);
        }
    }
    EXPECT_TRUE(store.winners_with_binaries(store.add_device(h200(1))).empty()) << "another device has none";
}

// What narrowed the search comes back with the winner; a winner of a full search that
// replaces it clears it.
TEST(Store, AWinnerKeepsWhatNarrowedItsSearch) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    Winner w = winner(id, shape(8, 4096, 4096), 0.9, nullptr);
    w.narrowed_by = "--families decode; --max-candidates 20, reached";
    store.put_winner(w);
    EXPECT_EQ(store.find_winner(id, w.shape)->narrowed_by, w.narrowed_by);
    EXPECT_EQ(store.winners(id).at(0).narrowed_by, w.narrowed_by);
    w.narrowed_by.clear();
    store.put_winner(w);
    EXPECT_EQ(store.find_winner(id, w.shape)->narrowed_by, "");
}

TEST(Store, AWinnerWhoseBinaryIsNotCachedIsRefused) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const Binary b = naive_binary();  // never put
    EXPECT_THROW(store.put_winner(winner(store.add_device(h200()), shape(1, 1, 1), 1, &b)), DbError);
    EXPECT_TRUE(store.winners().empty());
}

// A recorder's counts add up per shape; misses() sums the recorders, misses_by_recorder()
// keeps them apart.
TEST(Store, MissesAddUpPerShapeAcrossRecorders) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    store.record_misses({Miss{id, shape(3, 64, 64), 2, "", "", ""}, Miss{id, shape(5, 64, 64), 1, "", "", ""}}, "one");
    store.record_misses({Miss{id, shape(3, 64, 64), 4, "", "", ""}}, "one");
    store.record_misses({Miss{id, shape(3, 64, 64), 10, "", "", ""}}, "two");
    const std::vector<Miss> misses = store.misses(id);
    ASSERT_EQ(misses.size(), 2u);
    EXPECT_EQ(misses[0].shape, shape(3, 64, 64)) << "most frequent first";
    EXPECT_EQ(misses[0].count, 16);
    EXPECT_LE(misses[0].first_seen, misses[0].last_seen);
    EXPECT_EQ(misses[1].count, 1);
    const std::vector<Miss> rows = store.misses_by_recorder();
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].recorder, "one");
    EXPECT_EQ(rows[0].count, 6);
    EXPECT_EQ(rows[1].recorder, "two");
    EXPECT_THROW(store.record_misses({Miss{id, shape(3, 64, 64), 1, "", "", ""}}, ""), DbError) << "no recorder";
}

// A writer (dispatch's boot and file) finds the recorder it made in this file, per device,
// so its rows grow per shape, not per write. Another writer (a clone on another boot), a
// file that holds none of its rows (another database copied onto it) and a device whose
// rows were pruned each start a new recorder.
TEST(Store, AWriterCountsOnUnderTheRecorderItMadeInThisFile) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string a = store.add_device(h200()), b = store.add_device(h200(1));
    const ShapeKey key = shape(3, 64, 64);
    const auto recorder_of = [](TuningStore& s, const std::string& device) {
        std::string found;
        for (const Miss& row : s.misses_by_recorder())
            if (row.device_id == device) {
                EXPECT_TRUE(found.empty()) << "one recorder a device";
                found = row.recorder;
            }
        return found;
    };
    store.record_misses_as({Miss{a, key, 2, "", "", ""}}, "boot-1/f");
    const std::string first = recorder_of(store, a);
    EXPECT_EQ(first.size(), 32 + std::string("@boot-1/f").size()) << first;
    EXPECT_EQ(first.substr(32), "@boot-1/f");
    store.record_misses_as({Miss{a, key, 3, "", "", ""}}, "boot-1/f");
    EXPECT_EQ(recorder_of(store, a), first);
    EXPECT_EQ(store.misses(a).at(0).count, 5);

    store.record_misses_as({Miss{b, key, 1, "", "", ""}}, "boot-1/f");
    EXPECT_NE(recorder_of(store, b), first) << "a device of its own";
    store.record_misses_as({Miss{a, key, 7, "", "", ""}}, "boot-2/f");  // a clone of the disk, booted elsewhere
    EXPECT_EQ(store.misses_by_recorder().size(), 3u);
    EXPECT_EQ(store.misses(a).at(0).count, 12);

    TuningStore foreign(dir.file("foreign.db"));
    foreign.add_device(h200());
    foreign.record_misses_as({Miss{a, key, 1, "", "", ""}}, "boot-1/f");
    EXPECT_NE(recorder_of(foreign, a), first) << "another file holds none of the writer's rows";

    prune_devices(store, {a});
    store.add_device(h200());
    store.record_misses_as({Miss{a, key, 4, "", "", ""}}, "boot-1/f");
    EXPECT_NE(recorder_of(store, a), first) << "pruned, the device starts again under a new recorder";
    EXPECT_EQ(store.misses(a).at(0).count, 4);
    EXPECT_THROW(store.record_misses_as({Miss{a, key, 1, "", "", ""}}, ""), DbError) << "no writer";
}

// A merge can bring back the recorder a writer had before its device was pruned; the writer
// counts on under the most recent of its recorders, the one it made since, even on a shape
// only the older one has: the older one's counts may stand, larger, in a file it was merged
// into, which would keep them over any it grew from here.
TEST(Store, AWriterCountsOnUnderItsMostRecentRecorder) {
    TempDir dir;
    TuningStore store(dir.file("t.db")), hub(dir.file("hub.db"));
    const std::string a = store.add_device(h200());
    const ShapeKey both = shape(3, 64, 64), old_only = shape(5, 64, 64);
    const std::string long_ago = "2026-01-01T00:00:00.000Z";
    store.record_misses_as({Miss{a, both, 2, long_ago, long_ago, ""}, Miss{a, old_only, 5, long_ago, long_ago, ""}},
                           "boot-1/f");
    merge_store(hub, store);
    const std::string before_prune = store.misses_by_recorder().at(0).recorder;
    prune_devices(store, {a});
    store.add_device(h200());
    store.record_misses_as({Miss{a, both, 3, "", "", ""}}, "boot-1/f");
    merge_store(store, hub);  // the earlier recorder comes back
    ASSERT_EQ(store.misses_by_recorder().size(), 3u);
    store.record_misses_as({Miss{a, old_only, 1, "", "", ""}}, "boot-1/f");  // a shape the new one lacks, alone
    store.record_misses_as({Miss{a, both, 4, "", "", ""}}, "boot-1/f");
    for (const Miss& row : store.misses_by_recorder()) {
        if (row.recorder == before_prune)
            EXPECT_EQ(row.count, row.shape == both ? 2 : 5) << "the recorder from before the prune is left as it was";
        else
            EXPECT_EQ(row.count, row.shape == both ? 7 : 1);
    }
    EXPECT_EQ(store.misses_by_recorder().size(), 4u);
}

TEST(Store, EachNewMissRecorderIsAnotherId) {
    const std::string first = TuningStore::new_miss_recorder(), second = TuningStore::new_miss_recorder();
    EXPECT_EQ(first.size(), 32u);
    EXPECT_NE(first, second);
}

TEST(Store, AFailedWriteInsideABatchLeavesNothingBehind) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    const std::string id = store.add_device(h200());
    EXPECT_THROW(store.record_misses({Miss{id, shape(3, 64, 64), 2, "", "", ""}, Miss{"unknown", shape(5, 64, 64), 1, "", "", ""}},
                                     "recorder"),
                 DbError);
    EXPECT_TRUE(store.misses().empty());
}

// A trial where there is no file is an empty store at this build's schema, takes writes,
// and makes no file at its path.
TEST(Store, ATrialWithoutAFileMakesNone) {
    TempDir dir;
    const std::string path = dir.file("never.db");
    TuningStore store(path, OpenMode::Trial);
    EXPECT_EQ(store.schema_version(), latest_schema_version());
    EXPECT_EQ(store.opened_version(), 0);
    const std::string id = store.add_device(h200());
    store.record_measurement(measurement(id, shape(1, 64, 64), 0.01));
    EXPECT_EQ(store.measurements(id).size(), 1u);
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

// A new store is empty, at this build's schema, whatever is at its path by then: it neither
// reads the file there (a Trial would copy it whole) nor writes it, and is not published
// over it.
TEST(Store, ANewStoreNeitherReadsNorWritesTheFileThere) {
    TempDir dir;
    const std::string path = write_sample(dir);
    const std::string before = bytes_of(path);
    TuningStore store(path, OpenMode::New);
    EXPECT_EQ(store.schema_version(), latest_schema_version());
    EXPECT_EQ(store.opened_version(), 0);
    EXPECT_TRUE(store.devices().empty());
    EXPECT_TRUE(store.winners().empty());
    store.add_device(h200(1));
    EXPECT_FALSE(store.publish_as_new_file(path));
    EXPECT_EQ(bytes_of(path), before);
    EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).devices().size(), 1u);
}
