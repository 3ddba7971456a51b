#include "db/publish.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <random>

namespace sgemm {

namespace fs = std::filesystem;

namespace {

// A name beside `path` that no other process picks: the kernel's entropy.
std::string incomplete_name(const std::string& path) {
    std::random_device random;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", static_cast<unsigned>(random()), static_cast<unsigned>(random()));
    return path + ".incomplete-" + hex;
}

// Makes the empty file `path` (VACUUM INTO takes an empty file), with the permissions SQLite
// gives a database it makes. False where it cannot be made.
bool make_empty_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

// Puts the file's bytes on the disk: a link to a file whose bytes a power cut loses would be a
// damaged database. The errno of a failure, else 0.
int sync_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    const int error = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    return error;
}

}  // namespace

bool publish_new_database(sqlite::Connection& source, const std::string& path) {
    std::error_code ec;
    if (fs::is_symlink(path, ec) || fs::exists(path, ec)) return false;
    const std::string incomplete = incomplete_name(path);
    if (!make_empty_file(incomplete)) return false;
    const auto remove_incomplete = [&] {
        fs::remove(incomplete, ec);
        fs::remove(incomplete + "-journal", ec);
    };
    try {
        source.query("VACUUM INTO ?1").bind(1, incomplete).run();
    } catch (const DbError& e) {
        remove_incomplete();
        throw DbError(std::string(e.what()) + "; so no database was made at " + path, e.code, e.sql, e.reason);
    }
    if (const int error = sync_file(incomplete); error != 0) {
        remove_incomplete();
        throw DbError("cannot write " + path + ": syncing the new database to disk failed (" +
                          std::error_code(error, std::generic_category()).message() + "); so no database was made there",
                      SQLITE_IOERR_FSYNC);
    }
    const bool linked = ::link(incomplete.c_str(), path.c_str()) == 0;
    remove_incomplete();
    return linked;
}

}  // namespace sgemm
