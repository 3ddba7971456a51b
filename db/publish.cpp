#include "db/publish.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

namespace sgemm {

namespace fs = std::filesystem;

namespace {

const char* const kIncompleteInfix = ".incomplete-";
const std::size_t kIncompleteIdLength = 16;  // hex digits

// A name beside `path` that no other process picks: the kernel's entropy.
std::string incomplete_name(const std::string& path) {
    std::random_device random;
    char hex[kIncompleteIdLength + 1];
    std::snprintf(hex, sizeof hex, "%08x%08x", static_cast<unsigned>(random()), static_cast<unsigned>(random()));
    return path + kIncompleteInfix + hex;
}

// The error of a step of the publishing that the system refused (`error`, an errno).
DbError refused(const std::string& path, const std::string& step, int error) {
    return DbError("cannot write " + path + ": " + step + " failed (" +
                       std::error_code(error, std::generic_category()).message() + "); so no database was made there",
                   SQLITE_IOERR);
}

// Puts `path`'s bytes (a file's, or a folder's entries) on the disk. The errno of a failure,
// else 0.
int sync_to_disk(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    const int error = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    return error;
}

// Whether `fd` and the name `path` are one file: the name was not removed, or made anew.
bool names_open_file(int fd, const std::string& path) {
    struct stat opened {}, named {};
    return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
           opened.st_ino == named.st_ino;
}

// Removes a file written under its other name and what SQLite made beside it.
void remove_incomplete(const std::string& name) {
    std::error_code ec;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(name + suffix, ec);
}

// The file written under its other name, locked (flock) while it lives, so that a sweep of
// the folder (remove_abandoned_incomplete_files) tells it from one a killed process left.
// Removed, with what SQLite made beside it, however the publishing ends (an error, an
// exception of any kind), and after the link, which leaves the database at its path alone.
class IncompleteFile {
public:
    // Makes a new, empty file beside `path` (empty, as VACUUM INTO takes it, with the
    // permissions SQLite gives a database it makes) and locks it.
    explicit IncompleteFile(const std::string& path) {
        // A sweep may remove the file between its open and its lock, as one nobody holds: the
        // name is then checked, and another one made.
        for (int attempt = 0; attempt < 3 && fd_ < 0; ++attempt) {
            name_ = incomplete_name(path);
            const int fd = ::open(name_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
            if (fd < 0) throw refused(path, "making " + name_, errno);
            // flock, not fcntl: SQLite's fcntl locks on the file are apart from it, and its
            // close of its own descriptor of the file releases no flock.
            if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
                const int error = errno;
                ::close(fd);
                throw refused(path, "locking " + name_, error);
            }
            if (names_open_file(fd, name_)) fd_ = fd;
            else ::close(fd);
        }
        if (fd_ < 0) throw refused(path, "making " + name_ + " (removed at once, three times)", EAGAIN);
    }
    ~IncompleteFile() {
        remove();
        ::close(fd_);  // and so the lock
    }
    IncompleteFile(const IncompleteFile&) = delete;
    IncompleteFile& operator=(const IncompleteFile&) = delete;
    const std::string& name() const { return name_; }
    void remove() { remove_incomplete(name_); }

private:
    std::string name_;
    int fd_ = -1;
};

// Whether `entry` is a file written under another name for the database `database` (its
// name and "-journal", "-wal" or "-shm"); if so, `incomplete` is the name of that file.
bool is_incomplete_file_of(const std::string& entry, const std::string& database, std::string& incomplete) {
    const std::string prefix = database + kIncompleteInfix;
    if (entry.compare(0, prefix.size(), prefix) != 0 || entry.size() < prefix.size() + kIncompleteIdLength)
        return false;
    for (std::size_t i = prefix.size(); i < prefix.size() + kIncompleteIdLength; ++i)
        if (!std::isxdigit(static_cast<unsigned char>(entry[i]))) return false;
    const std::string companion = entry.substr(prefix.size() + kIncompleteIdLength);
    if (!companion.empty() && companion != "-journal" && companion != "-wal" && companion != "-shm") return false;
    incomplete = entry.substr(0, prefix.size() + kIncompleteIdLength);
    return true;
}

// Whether a link that failed with `error` leaves the file to be made in place: the path is
// taken by now (another process made the file), or the file system has no hard links.
bool made_in_place_after(int error) {
    return error == EEXIST || error == EPERM || error == EOPNOTSUPP || error == ENOSYS;
}

}  // namespace

bool publish_new_database(sqlite::Connection& source, const std::string& path) {
    remove_abandoned_incomplete_files(path);
    std::error_code ec;
    if (fs::is_symlink(path, ec) || fs::exists(path, ec)) return false;
    IncompleteFile incomplete(path);
    const std::string& name = incomplete.name();
    try {
        source.query("VACUUM INTO ?1").bind(1, sqlite::file_uri(name)).run();
        // In WAL mode, as a writer's open leaves a file: a later writer need not switch it,
        // which a reader holding it open would keep that writer from.
        sqlite::Connection file(name, sqlite::Access::ReadWrite, std::chrono::milliseconds(0));
        auto mode = file.query("PRAGMA journal_mode = WAL");
        if (!mode.step() || mode.text(0) != "wal")
            throw DbError(name + ": SQLite did not switch the new database to WAL mode", SQLITE_ERROR);
    } catch (const DbError& e) {
        throw DbError(std::string(e.what()) + "; so no database was made at " + path, e.code, e.sql, e.reason);
    }
    if (const int error = sync_to_disk(name); error != 0) throw refused(path, "syncing the new database to disk", error);
    if (::link(name.c_str(), path.c_str()) != 0) {
        const int error = errno;
        if (made_in_place_after(error)) return false;
        throw refused(path, "linking the new database into place", error);
    }
    incomplete.remove();
    // The link, and the other name's removal, reach the disk with the folder's entries.
    if (const int error = sync_to_disk(sqlite::folder_of(path).string()); error != 0)
        throw DbError("cannot write " + path + ": syncing its folder after the new database was linked into place "
                          "failed (" + std::error_code(error, std::generic_category()).message() +
                          "): the database is there, but a power cut may lose it",
                      SQLITE_IOERR_DIR_FSYNC);
    return true;
}

void remove_abandoned_incomplete_files(const std::string& path) {
    const fs::path folder = sqlite::folder_of(path);
    const std::string database = fs::path(path).filename().string();
    std::error_code ec;
    std::set<std::string> incomplete_names;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        std::string incomplete;
        if (is_incomplete_file_of(it->path().filename().string(), database, incomplete))
            incomplete_names.insert((folder / incomplete).string());
    }
    for (const std::string& name : incomplete_names) {
        const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            // Companions of a file removed already: its writer ended between the removals.
            if (errno == ENOENT) remove_incomplete(name);
            continue;
        }
        // Held: its writer lives. Taken: its writer ended without removing it (killed), unless
        // the name was removed (its writer's end) or made anew meanwhile.
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && names_open_file(fd, name)) remove_incomplete(name);
        ::close(fd);
    }
}

}  // namespace sgemm
