// Merging another database: conflicts, another device, and refusals.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "db/merge.h"
#include "db/selection.h"
#include "db/verify.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

namespace {
using Outcome = WinnerOffer::Outcome;

// Writes "theirs.db" in `dir`: the h200() device, `binary`, and `winners`.
void write_theirs(TempDir& dir, const Binary& binary, const std::vector<Winner>& winners) {
    TuningStore theirs(dir.file("theirs.db"));
    theirs.add_device(h200());
    theirs.put_binary(binary);
    for (const Winner& w : winners) theirs.put_winner(w);
}

// write_sample as "theirs.db" in `dir`, then `edit` on it, as by hand; returns its path.
std::string sample_edited_by_hand(const TempDir& dir, const std::function<void(TuningStore&)>& edit) {
    const std::string path = write_sample(dir, "theirs.db");
    TuningStore theirs(path);
    edit(theirs);
    return path;
}

// What merge_store's refusal says (a test failure, and "", where it merges).
std::string merge_refusal(TuningStore& ours, TuningStore& theirs) {
    try {
        merge_store(ours, theirs);
        ADD_FAILURE() << "merged";
    } catch (const DbError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

// Same device in both files: the faster winner of each shape stays, with its provenance and
// what narrowed its search; new shapes arrive; measurements are added once however often the
// merge runs; the two files' miss counts (each its own recorder) add up, once however often
// the merge runs.
TEST(Merge, TheFasterWinnerStaysWithItsProvenance) {
    TempDir dir;
    const Binary b = naive_binary();
    TuningStore ours(dir.file("ours.db"));
    const std::string id = ours.add_device(h200());
    ours.put_binary(b);
    ours.put_winner(winner(id, shape(1, 4096, 4096), 1.0, &b));   // theirs is faster
    ours.put_winner(winner(id, shape(8, 4096, 4096), 2.0, &b));   // ours is faster
    ours.record_misses({Miss{id, shape(3, 64, 64), 2, "", "", ""}}, "ours");
    {
        TuningStore theirs(dir.file("theirs.db"));
        theirs.add_device(h200());
        theirs.put_binary(b);
        Winner faster = winner(id, shape(1, 4096, 4096), 0.8, &b);
        faster.provenance = "sgemm-tune on box 2";
        faster.narrowed_by = "--families naive";  // travels with it: the next full tune replaces it
        theirs.put_winner(faster);
        theirs.put_winner(winner(id, shape(8, 4096, 4096), 2.5, &b));
        theirs.put_winner(winner(id, shape(32, 4096, 4096), 3.0, nullptr));  // new, cuBLAS
        theirs.record_measurement(measurement(id, shape(1, 4096, 4096), 0.8));
        theirs.record_misses({Miss{id, shape(3, 64, 64), 5, "", "", ""}}, "theirs");
    }
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    EXPECT_EQ(s.count(Outcome::Replaced), 1);
    EXPECT_EQ(s.count(Outcome::Kept), 1);
    EXPECT_EQ(s.count(Outcome::Added), 1);
    EXPECT_EQ(s.devices_added, 0);
    EXPECT_EQ(s.measurements_added, 1);

    const Winner replaced = *ours.find_winner(id, shape(1, 4096, 4096));
    EXPECT_DOUBLE_EQ(replaced.ms, 0.8);
    EXPECT_EQ(replaced.provenance, "sgemm-tune on box 2; merged from " + theirs.path());
    EXPECT_EQ(replaced.narrowed_by, "--families naive");
    EXPECT_DOUBLE_EQ(ours.find_winner(id, shape(8, 4096, 4096))->ms, 2.0);
    EXPECT_EQ(ours.find_winner(id, shape(8, 4096, 4096))->provenance, "test");
    EXPECT_TRUE(ours.find_winner(id, shape(32, 4096, 4096))->kernel.is_cublas());
    EXPECT_EQ(ours.misses(id).at(0).count, 7);
    EXPECT_EQ(s.misses_merged, 1);

    const MergeSummary again = merge_store(ours, theirs);
    EXPECT_EQ(again.count(Outcome::Kept), 3);
    EXPECT_EQ(again.measurements_added, 0);
    EXPECT_EQ(again.misses_merged, 0);
    EXPECT_EQ(ours.misses(id).at(0).count, 7) << "a file merged twice counts its misses once";
    ASSERT_EQ(ours.measurements().size(), 1u);
    // The measurement comes whole, its error figures with it.
    const Measurement merged = ours.measurements().at(0);
    ASSERT_TRUE(merged.max_error_u && merged.rms_error_u);
    EXPECT_DOUBLE_EQ(*merged.max_error_u, 3.25);
    EXPECT_DOUBLE_EQ(*merged.rms_error_u, 0.4375);
    EXPECT_TRUE(verify_store(ours).ok());
}

// Miss counts across merges: a recorder that counted more since the last merge brings only
// its growth; a file that holds a third file's counts (merged into it earlier) brings them
// once; copies of one database count apart (their handles had their own recorders).
TEST(Merge, EachRecordersMissesCountOnceThroughAnyChainOfMerges) {
    TempDir dir;
    const ShapeKey key = shape(3, 64, 64);
    TuningStore hub(dir.file("hub.db"));
    const std::string id = hub.add_device(h200());
    const auto box = [&](const std::string& name) {
        auto store = std::make_unique<TuningStore>(dir.file(name + ".db"));
        store->add_device(h200());
        return store;
    };
    auto a = box("a"), b = box("b");
    a->record_misses({Miss{id, key, 2, "", "", ""}}, "handle-a");
    b->record_misses({Miss{id, key, 3, "", "", ""}}, "handle-b");
    merge_store(*b, *a);  // b now holds a's count too
    merge_store(hub, *a);
    EXPECT_EQ(hub.misses(id).at(0).count, 2);
    merge_store(hub, *b);  // a's count again, by way of b
    EXPECT_EQ(hub.misses(id).at(0).count, 5);
    a->record_misses({Miss{id, key, 4, "", "", ""}}, "handle-a");  // a's handle counted on
    EXPECT_EQ(merge_store(hub, *a).misses_merged, 1);
    EXPECT_EQ(hub.misses(id).at(0).count, 9);
    EXPECT_EQ(hub.misses_by_recorder().size(), 2u);
    EXPECT_EQ(hub.connection().integer("SELECT count FROM misses_summary"), 9);
    EXPECT_EQ(hub.connection().integer("SELECT recorders FROM misses_summary"), 2);
}

// The provenance names the file merged from in UTF-8, as the database's text must be, even
// where the file's name is in another encoding (Latin-1 here): a byte that is not UTF-8
// becomes U+FFFD.
TEST(Merge, TheProvenanceNamesAFileOfAnyEncodingInUtf8) {
    TempDir dir;
    TuningStore ours(dir.file("ours.db"));
    const std::string id = ours.add_device(h200());
    {
        TuningStore theirs(dir.file("th\xE9.db"));
        theirs.add_device(h200());
        theirs.put_winner(winner(id, shape(32, 4096, 4096), 3.0, nullptr));
    }
    TuningStore theirs(dir.file("th\xE9.db"), OpenMode::ReadOnly);
    merge_store(ours, theirs);
    const std::string provenance = ours.find_winner(id, shape(32, 4096, 4096))->provenance;
    EXPECT_NE(provenance.find("; merged from "), std::string::npos) << provenance;
    EXPECT_NE(provenance.find("th\xEF\xBF\xBD.db"), std::string::npos) << provenance;
    EXPECT_EQ(provenance.find("\xE9"), std::string::npos) << "a Latin-1 byte was stored as it was";
}

// Another device's rows come in beside ours and never touch our winners or what our
// device's dispatch would choose.
TEST(Merge, AnotherDevicesRowsAreKeptApart) {
    TempDir dir;
    const Binary b = naive_binary();
    TuningStore ours(dir.file("ours.db"));
    const std::string id = fill_sample(ours);
    const std::vector<Winner> before = ours.winners(id);
    std::string other_id;
    {
        TuningStore theirs(dir.file("theirs.db"));
        other_id = theirs.add_device(h200(1));  // a newer driver: another device
        theirs.put_binary(b);
        theirs.put_winner(winner(other_id, shape(1, 4096, 4096), 0.001, &b));  // far faster
        theirs.put_winner(winner(other_id, shape(4, 4096, 4096), 0.002, &b));
    }
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    EXPECT_EQ(s.devices_added, 1);
    EXPECT_EQ(s.count(Outcome::Added), 2);
    EXPECT_EQ(s.count(Outcome::Replaced), 0);
    EXPECT_EQ(ours.devices().size(), 2u);
    const std::vector<Winner> after = ours.winners(id);
    ASSERT_EQ(after.size(), before.size());
    for (std::size_t i = 0; i < after.size(); ++i) EXPECT_DOUBLE_EQ(after[i].ms, before[i].ms);
    EXPECT_EQ(ours.winners(other_id).size(), 2u);
    // M=4 was tuned only on the other device: ours still picks its own nearest shape.
    const Selection pick = select_kernel(after, shape(4, 4096, 4096));
    ASSERT_EQ(pick.kind, SelectionKind::Nearest);
    EXPECT_EQ(pick.winner->device_id, id);
}

// A device comes in with what it brings: one whose only winner is refused stays out, and one
// that brings a measurement alone comes in.
TEST(Merge, ADeviceWhoseEveryWinnerIsRefusedIsNotAdded) {
    TempDir dir;
    Binary damaged = naive_binary();
    damaged.cubin.resize(100);  // cut short
    damaged.cubin_checksum = cubin_checksum(damaged.cubin);
    TuningStore ours(dir.file("ours.db"));
    fill_sample(ours);
    std::string refused_id, measured_id;
    {
        TuningStore theirs(dir.file("theirs.db"));
        refused_id = theirs.add_device(h200(1));
        measured_id = theirs.add_device(h200(2));
        theirs.put_binary(damaged);
        theirs.put_winner(winner(refused_id, shape(1, 4096, 4096), 0.05, &damaged));
        theirs.record_measurement(measurement(measured_id, shape(1, 4096, 4096), 0.05));
    }
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    ASSERT_EQ(s.count(Outcome::Refused), 1);
    EXPECT_EQ(s.devices_added, 1);
    EXPECT_FALSE(ours.find_device(refused_id));
    EXPECT_TRUE(ours.find_device(measured_id));
    EXPECT_EQ(ours.devices().size(), 2u);
}

TEST(Merge, AWinnerWithABinaryForAnotherArchIsRefused) {
    TempDir dir;
    Binary wrong = naive_binary();
    wrong.cache_key = "for-sm_80";
    wrong.arch = 80;  // the row says sm_80, the cubin is sm_90
    TuningStore ours(dir.file("ours.db"));
    const std::string id = fill_sample(ours);
    write_theirs(dir, wrong, {winner(id, shape(1, 4096, 4096), 0.001, &wrong)});
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    ASSERT_EQ(s.count(Outcome::Refused), 1);
    EXPECT_NE(s.winners[0].reason.find("sm_90 but the row says sm_80"), std::string::npos) << s.winners[0].reason;
    EXPECT_DOUBLE_EQ(ours.find_winner(id, shape(1, 4096, 4096))->ms, 0.05);
    EXPECT_FALSE(ours.find_binary("for-sm_80"));
}

// A winner whose binary key names a binary stored here for other sources (of its family, or of
// another family) is refused: put_binary would keep the stored binary, filed as the other
// kernel's, and verify would fail the winner. The same key with the same sources comes in.
TEST(Merge, AWinnerWhoseBinaryKeyIsStoredForOtherSourcesIsRefused) {
    TempDir dir;
    const Binary ours_binary = naive_binary();
    TuningStore ours(dir.file("ours.db"));
    const std::string id = fill_sample(ours);
    Binary other_sources = ours_binary;
    other_sources.kernel.template_hash = "another build's";
    write_theirs(dir, other_sources,
                 {winner(id, shape(2, 4096, 4096), 0.01, &other_sources), winner(id, shape(3, 4096, 4096), 0.01, &ours_binary)});
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    ASSERT_EQ(s.winners.size(), 2u);
    ASSERT_EQ(s.winners[0].outcome, Outcome::Refused);
    EXPECT_NE(s.winners[0].reason.find("the binary stored under its key " + ours_binary.cache_key +
                                       " is of another kernel family or its sources (naive"),
              std::string::npos)
        << s.winners[0].reason;
    EXPECT_EQ(s.winners[1].outcome, Outcome::Added) << s.winners[1].reason;
    EXPECT_FALSE(ours.find_winner(id, shape(2, 4096, 4096)));
    EXPECT_EQ(ours.binary_kernel(ours_binary.cache_key)->template_hash, ours_binary.kernel.template_hash);
    const VerifyReport r = verify_store(ours);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
}

// A binary's checksum comes with it from another database: a cubin that no longer matches it
// is refused, and one that does keeps it. One that came without (a file from before
// checksums) stays without: a checksum of its bytes now would vouch for damage done before.
TEST(Merge, ABinarysChecksumComesWithItAndACubinThatNoLongerMatchesIsRefused) {
    Binary damaged = naive_binary(), legacy = naive_binary(), sound = naive_binary();
    damaged.cubin[damaged.cubin.size() / 2] ^= 0x5a;
    legacy.cubin_checksum.clear();
    ASSERT_FALSE(sound.cubin_checksum.empty()) << "to_binary makes it";
    const auto merged = [](const Binary& b, MergeSummary& s) {
        TempDir dir;
        TuningStore ours(dir.file("ours.db"));
        const std::string id = fill_sample(ours);
        ours.connection().exec("DELETE FROM winners; DELETE FROM binaries");
        write_theirs(dir, b, {winner(id, shape(1, 4096, 4096), 0.001, &b)});
        TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
        s = merge_store(ours, theirs);
        return ours.find_binary(b.cache_key);
    };
    MergeSummary s;
    EXPECT_FALSE(merged(damaged, s).has_value());
    ASSERT_EQ(s.count(Outcome::Refused), 1);
    EXPECT_NE(s.winners[0].reason.find("does not match the checksum"), std::string::npos) << s.winners[0].reason;
    EXPECT_EQ(merged(sound, s)->cubin_checksum, sound.cubin_checksum);
    EXPECT_EQ(s.count(Outcome::Added), 1);
    EXPECT_EQ(merged(legacy, s)->cubin_checksum, "");
    EXPECT_EQ(s.count(Outcome::Added), 1);
}

// Where ours keeps the same key's binary damaged inside from before checksums (its ELF reads
// whole), the sound binary that comes with their winner replaces it, so the winner is
// launched from the bytes the merge checked. The merge used to keep our row.
TEST(Merge, ASoundBinaryReplacesOursThatIsDamagedAndUnvouched) {
    TempDir dir;
    const Binary sound = naive_binary();
    Binary ours_damaged = sound;
    ours_damaged.cubin[ours_damaged.cubin.size() / 2] ^= 0x5a;
    ours_damaged.cubin_checksum.clear();
    ASSERT_EQ(cubin_problem(ours_damaged), "") << "only a checksum would tell";
    TuningStore ours(dir.file("ours.db"));
    const std::string id = ours.add_device(h200());
    ours.put_binary(ours_damaged);
    write_theirs(dir, sound, {winner(id, shape(1, 4096, 4096), 0.5, &sound)});
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    EXPECT_EQ(s.count(Outcome::Added), 1);
    EXPECT_EQ(s.binaries_added, 1);
    const std::optional<Binary> stored = ours.find_binary(sound.cache_key);
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->cubin, sound.cubin);
    EXPECT_EQ(stored->cubin_checksum, sound.cubin_checksum);
}

// Where our winner stays (theirs is no faster) and theirs brings the same binary, our copy
// from before checksums takes the checksum theirs vouches for, and ours damaged from before
// checksums gives way to their sound one. A kept offer used to bring nothing, so a database
// merged again and again never got the checksum the README promised.
TEST(Merge, AKeptWinnersOwnBinaryComingAgainGivesOursItsChecksum) {
    const Binary sound = naive_binary();
    Binary unvouched = sound, damaged = sound;
    unvouched.cubin_checksum.clear();
    damaged.cubin[damaged.cubin.size() / 2] ^= 0x5a;
    damaged.cubin_checksum.clear();
    for (const Binary& ours_binary : {unvouched, damaged}) {
        TempDir dir;
        TuningStore ours(dir.file("ours.db"));
        const std::string id = ours.add_device(h200());
        ours.put_binary(ours_binary);
        ours.put_winner(winner(id, shape(1, 4096, 4096), 0.5, &ours_binary));
        write_theirs(dir, sound, {winner(id, shape(1, 4096, 4096), 0.5, &sound)});
        TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
        const MergeSummary s = merge_store(ours, theirs);
        EXPECT_EQ(s.count(Outcome::Kept), 1);
        const std::optional<Binary> stored = ours.find_binary(sound.cache_key);
        ASSERT_TRUE(stored);
        EXPECT_EQ(stored->cubin, sound.cubin);
        EXPECT_EQ(stored->cubin_checksum, sound.cubin_checksum);
        EXPECT_EQ(s.binaries_added, ours_binary.cubin == sound.cubin ? 0 : 1) << "a damaged binary replaced counts";
        // A checksum taken is a change, reported: a file of an older schema is then written
        // (upgraded) rather than left as it was for a merge that "changed nothing".
        EXPECT_EQ(s.checksums_taken, ours_binary.cubin == sound.cubin ? 1 : 0);
        EXPECT_FALSE(s.changed_nothing());
    }
}

// A source whose device row was edited by hand (its id no longer what its fields give) is
// refused before anything changes: its winners were found by no lookup and dropped without a
// word, and its measurements then failed the merge on a foreign key.
TEST(Merge, ASourceWithADeviceRowEditedByHandIsRefused) {
    TempDir dir;
    const std::string theirs_path = sample_edited_by_hand(dir, [](TuningStore& theirs) {
        theirs.record_measurement(measurement(theirs.devices().at(0).id(), shape(1, 4096, 4096), 0.8));
        theirs.connection().exec("UPDATE devices SET gpu_name = 'NVIDIA H200 (relabelled)'");
    });
    TuningStore ours(dir.file("ours.db"));
    TuningStore theirs(theirs_path, OpenMode::ReadOnly);
    const std::string refusal = merge_refusal(ours, theirs);
    EXPECT_NE(refusal.find("does not match its id (edited by hand?)"), std::string::npos) << refusal;
    EXPECT_NE(refusal.find("nothing was merged"), std::string::npos) << refusal;
    EXPECT_TRUE(ours.devices().empty());
    EXPECT_TRUE(ours.measurements().empty());
}

// A source whose device row was deleted in the sqlite3 shell (which does not enforce foreign
// keys) keeps its winners, measurements and misses: the winners were offered by no lookup,
// and the first measurement copied failed on this file's foreign key, in a message that named
// this file and the SQL. The source is refused, named, before anything changes.
TEST(Merge, ASourceWithRowsLeftDanglingByHandIsRefused) {
    TempDir dir;
    const std::string theirs_path = sample_edited_by_hand(
        dir, [](TuningStore& theirs) { theirs.connection().exec("PRAGMA foreign_keys = OFF; DELETE FROM devices"); });
    TuningStore ours(dir.file("ours.db"));
    TuningStore theirs(theirs_path, OpenMode::ReadOnly);
    const std::string refusal = merge_refusal(ours, theirs);
    EXPECT_EQ(refusal.rfind(theirs_path + ": ", 0), 0u) << refusal;
    EXPECT_NE(refusal.find("rows name a device or kernel row that is missing (deleted by hand?); nothing was merged"),
              std::string::npos)
        << refusal;
    EXPECT_TRUE(ours.devices().empty());
    EXPECT_TRUE(ours.measurements().empty());
}

// A winner whose binary row is missing is found, and refused alone (a re-tune mends it): the
// file's other winners come in.
TEST(Merge, AWinnerWhoseBinaryRowIsMissingIsRefusedAlone) {
    TempDir dir;
    const std::string theirs_path = sample_edited_by_hand(
        dir, [](TuningStore& theirs) { theirs.connection().exec("PRAGMA foreign_keys = OFF; DELETE FROM binaries"); });
    TuningStore ours(dir.file("ours.db"));
    TuningStore theirs(theirs_path, OpenMode::ReadOnly);
    const MergeSummary s = merge_store(ours, theirs);
    EXPECT_EQ(s.count(Outcome::Refused), 3) << "the naive kernel's three";
    EXPECT_EQ(s.count(Outcome::Added), 1) << "cuBLAS's, which has no binary";
}

// The kernel families' judgement (sgemm-db passes one) refuses a faster winner the same way:
// the good winner it would have replaced stays, and the others' offers are judged alone.
TEST(Merge, AWinnerTheKernelCheckRefusesDoesNotReplaceAGoodOne) {
    TempDir dir;
    const Binary b = naive_binary();
    TuningStore ours(dir.file("ours.db"));
    const std::string id = fill_sample(ours);
    write_theirs(dir, b, {winner(id, shape(1, 4096, 4096), 0.001, &b), winner(id, shape(2, 4096, 4096), 0.001, &b)});
    TuningStore theirs(dir.file("theirs.db"), OpenMode::ReadOnly);
    int asked = 0;
    const KernelProblem damaged_m1 = [&](const Winner& w, const DeviceFingerprint& device) -> std::string {
        ++asked;
        EXPECT_EQ(device.sm(), 90);
        return w.shape.M == 1 ? "damaged" : "";
    };
    const MergeSummary s = merge_store(ours, theirs, damaged_m1);
    EXPECT_EQ(asked, 2);
    ASSERT_EQ(s.winners.size(), 2u);
    EXPECT_EQ(s.winners[0].outcome, Outcome::Refused);
    EXPECT_EQ(s.winners[0].reason, "damaged");
    EXPECT_EQ(s.winners[1].outcome, Outcome::Added);
    EXPECT_DOUBLE_EQ(ours.find_winner(id, shape(1, 4096, 4096))->ms, 0.05);
}

TEST(Merge, AFileIsNotMergedIntoItself) {
    TempDir dir;
    TuningStore ours(dir.file("ours.db"));
    fill_sample(ours);
    TuningStore same(dir.file("./ours.db"), OpenMode::ReadOnly);
    const std::size_t winners = ours.winners().size();
    try {
        merge_store(ours, same);
        ADD_FAILURE() << "a file was merged into itself";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("into itself"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ours.winners().size(), winners);
}
