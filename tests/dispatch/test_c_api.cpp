// The public API where it needs no GPU: options, statuses and their strings, the order of
// create's checks (options, then the database, then the device), handles that are NULL or
// not handles, and the C++ wrapper's errors.
#include <gtest/gtest.h>
#include <sgemm/dispatch.h>
#include <sgemm/dispatch.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <system_error>
#include <string>
#include <utility>

#include <pwd.h>
#include <unistd.h>

#include "db/schema.h"
#include "db/sqlite.h"
#include "src/cuda/device.h"
#include "src/dispatch/fork_generation.h"
#include "src/dispatch/status_error.h"
#include "tests/db/fixture.h"

using namespace sgemm::testing;

namespace {

bool has_gpu() {
    try {
        sgemm::device_count();
        return true;
    } catch (const sgemm::NoDeviceError&) {
        return false;
    }
}

bool last_error_has(const std::string& text) {
    return std::string(sgemm_dispatch_last_error()).find(text) != std::string::npos;
}

// Options naming `db_path`, which must outlive them.
// The options keep the pointer: `db_path` must outlive them (a literal, or a named string's
// c_str(); a temporary std::string's would dangle).
sgemm_dispatch_options_t options_for(const char* db_path) {
    sgemm_dispatch_options_t o;
    sgemm_dispatch_options_init(&o);
    o.db_path = db_path;
    return o;
}

}  // namespace

TEST(DispatchApi, OptionsStartAtTheDocumentedDefaults) {
    sgemm_dispatch_options_t o;
    std::memset(&o, 0x5a, sizeof o);
    sgemm_dispatch_options_init(&o);
    EXPECT_EQ(o.db_path, nullptr);
    EXPECT_EQ(o.device, 0);
    EXPECT_EQ(o.fallback, SGEMM_DISPATCH_FALLBACK_CUBLAS);
    EXPECT_EQ(o.precision, SGEMM_DISPATCH_FP32);
    EXPECT_EQ(o.record_misses, 0);
    EXPECT_EQ(o.without_database, 0);
    EXPECT_EQ(o.max_streams, 0);
    EXPECT_EQ(o.miss_flush_ms, 0);
    EXPECT_EQ(o.deterministic, 0);
}

TEST(DispatchApi, EveryStatusHasItsNameAndMeaning) {
    for (int s = SGEMM_DISPATCH_SUCCESS; s <= SGEMM_DISPATCH_HOST_ERROR; ++s) {
        const std::string text = sgemm_dispatch_status_string(static_cast<sgemm_dispatch_status_t>(s));
        EXPECT_EQ(text.rfind("SGEMM_DISPATCH_", 0), 0u) << s << ": " << text;
        EXPECT_NE(text.find(": "), std::string::npos) << text;
    }
    EXPECT_STREQ(sgemm_dispatch_status_string(static_cast<sgemm_dispatch_status_t>(99)), "unknown status");
    EXPECT_STREQ(sgemm_dispatch_status_string(SGEMM_DISPATCH_NO_DEVICE),
                 "SGEMM_DISPATCH_NO_DEVICE: no CUDA device is visible, or no such ordinal");
}

TEST(DispatchApi, BadOptionsAreRefusedBeforeAnythingElse) {
    sgemm_dispatch_t handle = reinterpret_cast<sgemm_dispatch_t>(0x1);
    sgemm_dispatch_options_t o = options_for("/nonexistent/never.db");
    o.fallback = static_cast<sgemm_dispatch_fallback_t>(7);
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_EQ(handle, nullptr) << "a failed create leaves NULL";
    EXPECT_TRUE(last_error_has("options.fallback=7")) << sgemm_dispatch_last_error();

    o = options_for("/nonexistent/never.db");
    o.precision = static_cast<sgemm_dispatch_precision_t>(3);
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    o = options_for("/nonexistent/never.db");
    o.max_streams = -1;
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    o = options_for("/nonexistent/never.db");
    o.device = -2;
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_EQ(sgemm_dispatch_create(nullptr, &o), SGEMM_DISPATCH_INVALID_VALUE);
    // An empty path names no file; NULL is the way to ask for the default one.
    o = options_for("");
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_TRUE(last_error_has("options.db_path is \"\"")) << sgemm_dispatch_last_error();

    // The ranges' ends: 1024 streams is the most, and the flush period may not be negative.
    o = options_for("/nonexistent/never.db");
    o.max_streams = 1025;
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_TRUE(last_error_has("options.max_streams=1025: 0 (the default, 8) to 1024")) << sgemm_dispatch_last_error();
    o.max_streams = 1024;  // accepted: create goes on to the database, which is missing
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_DATABASE_ERROR) << sgemm_dispatch_last_error();
    o = options_for("/nonexistent/never.db");
    o.miss_flush_ms = -1;
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_TRUE(last_error_has("options.miss_flush_ms=-1 is negative")) << sgemm_dispatch_last_error();
    EXPECT_EQ(handle, nullptr);
}

// NULL options are the defaults, and a NULL db_path is the default database: $SGEMM_DB, else
// an absolute $XDG_DATA_HOME's, else $HOME's. Each is a missing file here, so create names
// the file it took. In a child, whose environment the test may change.
TEST(DispatchApi, NullOptionsAndANullPathTakeTheDefaultDatabase) {
    TempDir dir;
    const int child = in_child([&] {
        const auto expect_database_error_naming = [](const sgemm_dispatch_options_t* options, const std::string& path) {
            sgemm_dispatch_t h = nullptr;
            const sgemm_dispatch_status_t status = sgemm_dispatch_create(&h, options);
            if (status != SGEMM_DISPATCH_DATABASE_ERROR || !last_error_has(path) || h != nullptr)
                throw sgemm::Error("expected a database error naming " + path + ", got " +
                                   sgemm_dispatch_status_string(status) + ": " + sgemm_dispatch_last_error());
        };
        sgemm_dispatch_options_init(nullptr);  // passed over, as the header says
        setenv("SGEMM_DB", dir.file("from_sgemm_db.db").c_str(), 1);
        setenv("XDG_DATA_HOME", dir.file("xdg").c_str(), 1);
        setenv("HOME", dir.file("home").c_str(), 1);
        expect_database_error_naming(nullptr, dir.file("from_sgemm_db.db"));
        sgemm_dispatch_options_t o;
        sgemm_dispatch_options_init(&o);
        expect_database_error_naming(&o, dir.file("from_sgemm_db.db"));
        setenv("SGEMM_DB", "", 1);  // empty is unset
        expect_database_error_naming(&o, dir.file("xdg") + "/sgemm/tuning.db");
        setenv("XDG_DATA_HOME", "relative/xdg", 1);  // ignored, as the XDG spec says
        expect_database_error_naming(&o, dir.file("home") + "/.local/share/sgemm/tuning.db");
    });
    EXPECT_EQ(child, 0) << "the child's check (its stderr says what create said)";
}

// With no path at all (no SGEMM_DB, XDG_DATA_HOME or HOME, and a user the password database
// does not know, as a service may run): without_database runs on the fallback, but misses
// cannot be recorded anywhere, so record_misses is an invalid value; without
// without_database the database is the error.
TEST(DispatchApi, RecordingMissesWithNoDatabasePathIsAnInvalidValue) {
    constexpr uid_t kUnknownUser = 54321;
    if (geteuid() != 0) GTEST_SKIP() << "needs root, to run as a user the password database does not know";
    if (getpwuid(kUnknownUser)) GTEST_SKIP() << "user " << kUnknownUser << " exists here: it would have a home";
    constexpr int kCannotBecomeTheUser = 77;
    const int child = in_child([&] {
        if (setgid(kUnknownUser) != 0 || setuid(kUnknownUser) != 0) _exit(kCannotBecomeTheUser);
        unsetenv("SGEMM_DB");
        unsetenv("XDG_DATA_HOME");
        unsetenv("HOME");
        sgemm_dispatch_options_t o;
        sgemm_dispatch_options_init(&o);
        o.record_misses = 1;
        o.without_database = 1;
        sgemm_dispatch_t h = nullptr;
        sgemm_dispatch_status_t status = sgemm_dispatch_create(&h, &o);
        if (status != SGEMM_DISPATCH_INVALID_VALUE || !last_error_has("record_misses needs a database path: no database path"))
            throw sgemm::Error(std::string("record_misses without a path: ") + sgemm_dispatch_status_string(status) +
                               ": " + sgemm_dispatch_last_error());
        o.without_database = 0;
        status = sgemm_dispatch_create(&h, &o);
        if (status != SGEMM_DISPATCH_DATABASE_ERROR || !last_error_has("set SGEMM_DB"))
            throw sgemm::Error(std::string("no path: ") + sgemm_dispatch_status_string(status) + ": " +
                               sgemm_dispatch_last_error());
    });
    if (child == kCannotBecomeTheUser) GTEST_SKIP() << "root here cannot become user " << kUnknownUser;
    EXPECT_EQ(child, 0) << "the child's check (its stderr says what create said)";
}

TEST(DispatchApi, AMissingOrUnreadableDatabaseFailsWithTheReason) {
    TempDir dir;
    sgemm_dispatch_t handle = nullptr;
    const std::string missing = dir.file("missing.db");
    sgemm_dispatch_options_t o = options_for(missing.c_str());
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_TRUE(last_error_has(missing)) << sgemm_dispatch_last_error();
    EXPECT_TRUE(last_error_has("without_database")) << "it says how to run anyway: " << sgemm_dispatch_last_error();

    const std::string text = dir.file("notes.db");
    std::ofstream(text) << "not a database, but long enough to be read as one's header......................\n";
    o = options_for(text.c_str());
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_EQ(handle, nullptr);

    // SQLite files that are not a database this build reads: another program's, one of a
    // newer schema, and a damaged one. Each is the database's error, naming the file, and
    // none is changed by the try.
    const std::string foreign = dir.file("foreign.db");
    sgemm::sqlite::Connection(foreign, sgemm::sqlite::Access::ReadWrite, std::chrono::milliseconds(1000)).exec("CREATE TABLE recipes (name TEXT)");
    const std::string newer = write_sample(dir, "newer.db");
    sgemm::sqlite::Connection(newer, sgemm::sqlite::Access::ReadWrite, std::chrono::milliseconds(1000)).exec("PRAGMA user_version = 999");
    const std::string damaged = write_sample(dir, "damaged.db");
    {
        std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);  // past the 100-byte header: the first page's b-tree, the schema
        f << std::string(3000, '\xa5');
    }
    const std::pair<std::string, std::string> files_and_reasons[] = {{foreign, " is an SQLite database, but not a tuning database"},
                                                                      {newer, " has schema version 999, newer than"},
                                                                      {damaged, " is corrupt"}};
    for (const auto& [path, reason] : files_and_reasons) {
        const std::string before = bytes_of(path);
        o = options_for(path.c_str());
        EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_DATABASE_ERROR) << path;
        EXPECT_TRUE(last_error_has(path + reason)) << sgemm_dispatch_last_error();
        EXPECT_TRUE(last_error_has("without_database")) << sgemm_dispatch_last_error();
        EXPECT_EQ(handle, nullptr);
        EXPECT_EQ(bytes_of(path), before) << path << " was changed";
    }
}

// A database locked past the busy timeout (5 s) is, with without_database, no error, and
// record_misses's write check then waited on the lock a second time: create took 10 s.
TEST(DispatchApi, ADatabaseLockedAtCreateIsWaitedForOnce) {
    TempDir dir;
    const std::string path = write_sample(dir, "locked.db");
    const std::string held = dir.file("held");
    ChildProcess holder([&] {
        sgemm::sqlite::Connection db(path, sgemm::sqlite::Access::ReadWrite, std::chrono::milliseconds(5000));
        db.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE held_here (x)");
        std::ofstream(held) << "locked\n";
        sleep(60);
    });
    for (int i = 0; i < 1000 && !std::filesystem::exists(held); ++i) usleep(10000);
    ASSERT_TRUE(std::filesystem::exists(held)) << "the child never took the lock";
    sgemm_dispatch_options_t o = options_for(path.c_str());
    o.without_database = 1;
    o.record_misses = 1;
    sgemm_dispatch_t handle = nullptr;
    const auto start = std::chrono::steady_clock::now();
    const sgemm_dispatch_status_t status = sgemm_dispatch_create(&handle, &o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(status == SGEMM_DISPATCH_SUCCESS || status == SGEMM_DISPATCH_NO_DEVICE) << sgemm_dispatch_last_error();
    sgemm_dispatch_destroy(handle);
    EXPECT_GE(seconds, 4.5) << "the lock was not waited for: was it held?";
    EXPECT_LT(seconds, 8.0) << "the lock was waited for twice";

    // Locked, and this user may not write it (the tests run as root in CI: the child drops to
    // 'nobody'): create refuses it for the permissions, whatever the lock. (Such a user reads
    // a copy, taken without the lock; a lock that stops the open as well is not waited for a
    // second time, but the permissions are checked then too.)
    std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read);
    const int child = in_child([&] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) throw sgemm::Error("cannot drop root");
        sgemm_dispatch_t h = nullptr;
        if (sgemm_dispatch_create(&h, &o) != SGEMM_DISPATCH_DATABASE_ERROR || !last_error_has("read-only"))
            throw sgemm::Error(std::string("create: ") + sgemm_dispatch_last_error());
    });
    EXPECT_EQ(child, 0) << "the child's check (its stderr says what create said)";
}

// record_misses writes to the database: one it cannot write fails create, with the reason,
// rather than every flush and destroy later; without_database does not excuse it.
TEST(DispatchApi, RecordingMissesIntoADatabaseItCannotWriteFailsCreate) {
    TempDir dir;
    const std::string junk = dir.file("notes.db");
    std::ofstream(junk) << "not a database, but long enough to be read as one's header......................\n";
    sgemm_dispatch_t handle = nullptr;
    sgemm_dispatch_options_t o = options_for(junk.c_str());
    o.without_database = 1;
    o.record_misses = 1;
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_EQ(handle, nullptr);
    EXPECT_TRUE(last_error_has("record_misses writes to the database, and " + junk + " is not an SQLite database"))
        << sgemm_dispatch_last_error();

    // A shared database this user may read but not write (the tests run as root in CI: the
    // child drops to 'nobody').
    const std::string shared = dir.file("shared.db");
    {
        sgemm::TuningStore store(shared);
        fill_sample(store);
    }
    std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
    std::filesystem::permissions(shared, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                             std::filesystem::perms::others_read);
    const int child = in_child([&] {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) throw sgemm::Error("cannot drop root");
        sgemm_dispatch_options_t reader = options_for(shared.c_str());
        reader.record_misses = 1;
        sgemm_dispatch_t h = nullptr;
        if (sgemm_dispatch_create(&h, &reader) != SGEMM_DISPATCH_DATABASE_ERROR || !last_error_has("read-only"))
            throw sgemm::Error(std::string("create: ") + sgemm_dispatch_last_error());
    });
    EXPECT_EQ(child, 0) << "the child's check (its stderr says what create said)";
}

// A library newer than its database (an engine upgraded, its database deployed as it was)
// reads the file through a copy brought to its schema, and leaves the file at its version: the
// database is no error, so create goes on to the device.
TEST(DispatchApi, ADatabaseOfTheSchemaBeforeThisBuildsIsReadAndLeftAsItIs) {
    TempDir dir;
    const std::string path = file_of_version(dir, sgemm::latest_schema_version() - 1, h200());
    sgemm_dispatch_t handle = nullptr;
    const sgemm_dispatch_options_t o = options_for(path.c_str());
    const sgemm_dispatch_status_t status = sgemm_dispatch_create(&handle, &o);
    if (has_gpu()) {
        EXPECT_EQ(status, SGEMM_DISPATCH_SUCCESS) << sgemm_dispatch_last_error();
        EXPECT_EQ(sgemm_dispatch_destroy(handle), SGEMM_DISPATCH_SUCCESS);
    } else {
        EXPECT_EQ(status, SGEMM_DISPATCH_NO_DEVICE) << sgemm_dispatch_last_error();
    }
    EXPECT_EQ(user_version(path), sgemm::latest_schema_version() - 1);
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

// The status a failed step of create returns. The device step's is NO_DEVICE, but a CUDA
// error there (cudaSetDevice on a GPU another process holds in exclusive mode) is the
// runtime's refusal of a device that is there: it was NO_DEVICE, "no such ordinal". And the
// host's refusal of memory or of a thread is HOST_ERROR in any step.
TEST(CreateSteps, ACudaErrorIsCudaErrorAndNoDeviceIsNoDeviceWhateverTheStep) {
    const auto status_of = [](sgemm_dispatch_status_t step_status, const std::function<void()>& failing) {
        try {
            sgemm::run_step(step_status, "device", failing);
        } catch (const sgemm::StatusError& e) {
            return std::make_pair(e.status, std::string(e.what()));
        }
        return std::make_pair(SGEMM_DISPATCH_SUCCESS, std::string("no StatusError"));
    };
    using Result = std::pair<sgemm_dispatch_status_t, std::string>;
    EXPECT_EQ(status_of(SGEMM_DISPATCH_NO_DEVICE, [] { throw sgemm::CudaError("CUDA error: busy"); }),
              Result(SGEMM_DISPATCH_CUDA_ERROR, "device: CUDA error: busy"));
    EXPECT_EQ(status_of(SGEMM_DISPATCH_CUDA_ERROR, [] { throw sgemm::NoDeviceError("no CUDA device is visible"); }),
              Result(SGEMM_DISPATCH_NO_DEVICE, "no CUDA device is visible"));
    EXPECT_EQ(status_of(SGEMM_DISPATCH_NO_DEVICE, [] { throw sgemm::Error("device 3 does not exist"); }),
              Result(SGEMM_DISPATCH_NO_DEVICE, "device: device 3 does not exist"));
    // No host memory is no bug of the library's (it was INTERNAL_ERROR) nor the step's.
    EXPECT_EQ(status_of(SGEMM_DISPATCH_CUDA_ERROR, [] { throw std::bad_alloc(); }),
              Result(SGEMM_DISPATCH_HOST_ERROR, "device: std::bad_alloc"));
    // Nor is a thread the host would not start (std::thread, std::async); other system
    // errors (a path's) are the step's.
    const auto refused = std::make_error_code(std::errc::resource_unavailable_try_again);
    EXPECT_EQ(status_of(SGEMM_DISPATCH_CUDA_ERROR, [&] { throw std::system_error(refused, "a thread"); }).first,
              SGEMM_DISPATCH_HOST_ERROR);
    const auto missing = std::make_error_code(std::errc::no_such_file_or_directory);
    EXPECT_EQ(status_of(SGEMM_DISPATCH_DATABASE_ERROR, [&] { throw std::system_error(missing, "a path"); }).first,
              SGEMM_DISPATCH_DATABASE_ERROR);
    EXPECT_EQ(status_of(SGEMM_DISPATCH_NO_DEVICE,
                        [] { throw sgemm::StatusError(SGEMM_DISPATCH_INVALID_VALUE, "as it was"); }),
              Result(SGEMM_DISPATCH_INVALID_VALUE, "as it was"));
}

TEST(DispatchApi, WithoutAGpuCreateSaysThereIsNoDevice) {
    if (has_gpu()) GTEST_SKIP() << "a GPU is visible: create would succeed";
    TempDir dir;
    const std::string path = dir.file("t.db"), missing = dir.file("missing.db");
    {
        sgemm::TuningStore store(path);
        fill_sample(store);
    }
    sgemm_dispatch_t handle = nullptr;
    sgemm_dispatch_options_t o = options_for(path.c_str());
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_NO_DEVICE);
    EXPECT_EQ(handle, nullptr);
    EXPECT_TRUE(last_error_has("no CUDA device")) << sgemm_dispatch_last_error();

    // without_database: the missing file is no error, the missing GPU still is.
    o = options_for(missing.c_str());
    o.without_database = 1;
    EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_NO_DEVICE);
    // Nor, with record_misses, a database the first write would create, in folders it would
    // create, whether the path is absolute or relative.
    const std::string fresh = dir.file("fresh/folder/t.db");
    for (const char* path : {fresh.c_str(), "relative/folder/t.db"}) {
        const std::filesystem::path working = std::filesystem::current_path();
        std::filesystem::current_path(dir.path());
        o = options_for(path);
        o.without_database = 1;
        o.record_misses = 1;
        EXPECT_EQ(sgemm_dispatch_create(&handle, &o), SGEMM_DISPATCH_NO_DEVICE) << path << ": " << sgemm_dispatch_last_error();
        std::filesystem::current_path(working);
    }

    // The C++ wrapper throws the same.
    try {
        sgemm::Dispatch dispatch(options_for(path.c_str()));
        ADD_FAILURE() << "created without a GPU";
    } catch (const sgemm::DispatchError& e) {
        EXPECT_EQ(e.status(), SGEMM_DISPATCH_NO_DEVICE);
        EXPECT_NE(std::string(e.what()).find("SGEMM_DISPATCH_NO_DEVICE"), std::string::npos) << e.what();
    }
}

TEST(DispatchApi, ANullHandleIsRefusedByEveryCall) {
    float x[4] = {};
    EXPECT_EQ(sgemm_dispatch_gemm(nullptr, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 1, 1, 1, 1.0f, x, 1, x, 1, 0.0f,
                                  x, 1, nullptr),
              SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_TRUE(last_error_has("NULL")) << sgemm_dispatch_last_error();
    // explain leaves an empty text and length 0, not what the buffer and length held before.
    char text[64] = "an earlier explain's text";
    std::size_t length = 500;
    EXPECT_EQ(sgemm_dispatch_explain(nullptr, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 1, 1, 1, x, 1, x, 1, x, 1, text,
                                     sizeof text, &length),
              SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_STREQ(text, "");
    EXPECT_EQ(length, 0u);
    length = 500;  // a NULL buffer with a size: no text to empty, and length 0 all the same
    EXPECT_EQ(sgemm_dispatch_explain(nullptr, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 1, 1, 1, x, 1, x, 1, x, 1, nullptr,
                                     5, &length),
              SGEMM_DISPATCH_INVALID_VALUE);
    EXPECT_EQ(length, 0u);
    sgemm_dispatch_info_t info;
    EXPECT_EQ(sgemm_dispatch_get_info(nullptr, &info), SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_EQ(sgemm_dispatch_release_stream(nullptr, nullptr), SGEMM_DISPATCH_INVALID_HANDLE);
    sgemm_dispatch_choice_t choice;
    EXPECT_EQ(sgemm_dispatch_query(nullptr, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 1, 1, 1, x, 1, x, 1, x, 1, &choice),
              SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_EQ(sgemm_dispatch_prepare(nullptr, SGEMM_DISPATCH_OP_N, SGEMM_DISPATCH_OP_N, 1, 1, 1, x, 1, x, 1, x, 1),
              SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_EQ(sgemm_dispatch_destroy(nullptr), SGEMM_DISPATCH_SUCCESS) << "like free(NULL)";
}

TEST(DispatchApi, TheVersionIsTheBuildsAndTheDatabasesOwn) {
    // The version the device fingerprint of the tuning database holds (a winner is used only
    // by the library version that stored it).
    EXPECT_STREQ(sgemm_dispatch_version(), SGEMM_VERSION);
    // The header's macros say the same, so that they cannot fall behind a version bump.
    const std::string header = std::to_string(SGEMM_DISPATCH_VERSION_MAJOR) + "." +
                               std::to_string(SGEMM_DISPATCH_VERSION_MINOR) + "." +
                               std::to_string(SGEMM_DISPATCH_VERSION_PATCH);
    EXPECT_EQ(header, SGEMM_VERSION);
}

TEST(DispatchApi, MemoryThatIsNoHandleIsRefused) {
    std::uint64_t not_a_handle[4] = {0x1234, 0, 0, 0};
    const auto h = reinterpret_cast<sgemm_dispatch_t>(not_a_handle);
    sgemm_dispatch_info_t info;
    EXPECT_EQ(sgemm_dispatch_get_info(h, &info), SGEMM_DISPATCH_INVALID_HANDLE);
    EXPECT_TRUE(last_error_has("did not come from sgemm_dispatch_create")) << sgemm_dispatch_last_error();
    EXPECT_EQ(sgemm_dispatch_destroy(h), SGEMM_DISPATCH_INVALID_HANDLE);
}

// A child made by fork reads another generation than its parent, so a handle the parent
// created reads as inherited there (Dispatch.AForkedChildNeitherUsesNorFreesItsParentsHandle
// on the GPU); a grandchild another again; the parent keeps its own.
TEST(ForkGeneration, AdvancesInEachForkedChildOnly) {
    const std::uint64_t parent = sgemm::fork_generation();
    EXPECT_EQ(in_child([&] {
                  const std::uint64_t child = sgemm::fork_generation();
                  if (child == parent) throw sgemm::Error("the child reads its parent's generation");
                  if (in_child([&] {
                          if (sgemm::fork_generation() == child) throw sgemm::Error("the grandchild reads its parent's");
                      }) != 0)
                      throw sgemm::Error("the grandchild failed");
              }),
              0);
    EXPECT_EQ(sgemm::fork_generation(), parent);
}
