// A new database is made whole under another name and hard-linked into place (db/publish.h).
// The link fails rather than replace a file, and the writer then opens the file that is
// there, or makes its own in place where the file system has no hard links; any other
// failure says no database was made. These tests make that link fail as the system would,
// through the link(2) of tests/db/link_interposer.h.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <functional>

#include "db/schema.h"
#include "db/store.h"
#include "tests/db/fixture.h"
#include "tests/db/link_interposer.h"

using namespace sgemm;
using namespace sgemm::testing;
namespace fs = std::filesystem;

namespace {

// Arms the next link(2) to fail with `error`, having first run `before` (another process's
// work at that moment).
void fail_next_link(int error, const std::function<void(const char* to)>& before = {}) {
    instead_of_next_link([error, before](const char*, const char* to) {
        if (before) before(to);
        errno = error;
        return -1;
    });
}

// Arms the next link(2) to find its path taken by a file another process made just before: a
// copy of `made` is put there, then the system's link runs (and fails, as the path is taken).
void race_next_link_with(const std::string& made) {
    instead_of_next_link([made](const char* from, const char* to) {
        fs::copy_file(made, to);
        return system_link(from, to);
    });
}

// Each test starts and ends with the link unarmed.
class LinkFailures : public ::testing::Test {
protected:
    void SetUp() override { link_as_the_system_does(); }
    void TearDown() override { link_as_the_system_does(); }
};

TEST_F(LinkFailures, AWriterOpensTheFileAnotherProcessMadeBeforeItsLink) {
    TempDir dir;
    const std::string others = write_sample(dir, "others.db");
    const std::size_t their_winners = TuningStore(others, OpenMode::ReadOnly).winners().size();
    ASSERT_GT(their_winners, 0u);
    const std::string path = dir.file("t.db");
    race_next_link_with(others);
    {
        TuningStore store(path);
        EXPECT_EQ(link_calls(), 1);
        // Opened as the file that was there, at its version: not a new database.
        EXPECT_EQ(store.opened_version(), latest_schema_version());
        EXPECT_EQ(store.winners().size(), their_winners);
        store.add_device(h200(1));
    }
    {
        TuningStore after(path, OpenMode::ReadOnly);
        EXPECT_EQ(after.winners().size(), their_winners);
        EXPECT_EQ(after.devices().size(), 2u);
    }
    // The file written under another name went.
    EXPECT_EQ(listing(dir.path()), "others.db\nt.db\n");
}

TEST_F(LinkFailures, ATrialIsNotPublishedOverTheFileAnotherProcessMadeBeforeItsLink) {
    TempDir dir;
    const std::string others = write_sample(dir, "others.db");
    const std::string path = dir.file("imported.db");
    TuningStore trial(path, OpenMode::Trial);
    trial.add_device(h200(2));
    race_next_link_with(others);
    EXPECT_FALSE(trial.publish_as_new_file(path));
    EXPECT_EQ(link_calls(), 1);
    EXPECT_EQ(bytes_of(path), bytes_of(others));
    EXPECT_EQ(listing(dir.path()), "imported.db\nothers.db\n");
}

TEST_F(LinkFailures, AFileSystemWithoutHardLinksGetsTheFileMadeInPlace) {
    // EPERM: the file system does not take hard links (vfat, some FUSE ones); EOPNOTSUPP and
    // ENOSYS: it does not know the call.
    for (const int error : {EPERM, EOPNOTSUPP, ENOSYS}) {
        SCOPED_TRACE(std::error_code(error, std::generic_category()).message());
        TempDir dir;
        const std::string path = dir.file("t.db");
        fail_next_link(error);
        {
            TuningStore store(path);
            EXPECT_EQ(link_calls(), 1);
            EXPECT_EQ(store.opened_version(), 0);  // a new database
            store.add_device(h200());
        }
        EXPECT_EQ(TuningStore(path, OpenMode::ReadOnly).devices().size(), 1u);
        EXPECT_EQ(user_version(path), latest_schema_version());
        EXPECT_EQ(listing(dir.path()), "t.db\n");
    }
}

TEST_F(LinkFailures, AnyOtherFailureSaysNoDatabaseWasMadeAndLeavesNothing) {
    TempDir dir;
    const std::string path = dir.file("t.db");
    fail_next_link(EIO);
    try {
        TuningStore store(path);
        ADD_FAILURE() << "a writer whose link failed with EIO opened " << path;
    } catch (const DbError& e) {
        const std::string said = e.what();
        EXPECT_NE(said.find("linking the new database into place failed (" +
                            std::error_code(EIO, std::generic_category()).message() + ")"),
                  std::string::npos)
            << said;
        EXPECT_NE(said.find("so no database was made there"), std::string::npos) << said;
    }
    EXPECT_EQ(link_calls(), 1);
    EXPECT_EQ(listing(dir.path()), "");
    // Another process that made the file meanwhile keeps it: a link that failed only after it
    // was there, for a reason of its own, removes nothing but its own file.
    const std::string others = write_sample(dir, "others.db");
    fail_next_link(EIO, [&](const char* to) { fs::copy_file(others, to); });
    TuningStore trial(path, OpenMode::Trial);
    EXPECT_THROW(trial.publish_as_new_file(path), DbError);
    EXPECT_EQ(bytes_of(path), bytes_of(others));
    EXPECT_EQ(listing(dir.path()), "others.db\nt.db\n");
}

}  // namespace
