#include "db/publish.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>

#include "src/util/text.h"

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

// Whether `entry`, a name in a folder, is a file written under another name for the database
// named `database` there, or SQLite's "-journal", "-wal" or "-shm" of one.
bool is_incomplete_file_of(const std::string& entry, const std::string& database) {
    const std::string prefix = database + kIncompleteInfix;
    const std::size_t id_end = prefix.size() + kIncompleteIdLength;
    if (entry.compare(0, prefix.size(), prefix) != 0 || entry.size() < id_end) return false;
    for (std::size_t i = prefix.size(); i < id_end; ++i)
        if (!std::isxdigit(static_cast<unsigned char>(entry[i]))) return false;
    const std::string companion = entry.substr(id_end);
    return companion.empty() || companion == "-journal" || companion == "-wal" || companion == "-shm";
}

// The error of a step of the publishing that the system refused (`error`, an errno).
DbError refused(const std::string& path, const std::string& step, int error) {
    return DbError("cannot write " + printable(path) + ": " + step + " failed (" +
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

// The file written under its other name, with what SQLite made beside it: removed however the
// publishing ends (an error, an exception of any kind), and after the link, which leaves the
// database at its path alone.
class IncompleteFile {
public:
    explicit IncompleteFile(std::string path) : path_(std::move(path)) {}
    ~IncompleteFile() { remove(); }
    IncompleteFile(const IncompleteFile&) = delete;
    IncompleteFile& operator=(const IncompleteFile&) = delete;
    const std::string& path() const { return path_; }
    void remove() {
        std::error_code ec;
        for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(path_ + suffix, ec);
    }

private:
    std::string path_;
};

// Whether a link that failed with `error` leaves the file to be made in place: the path is
// taken by now (another process made the file), or the file system has no hard links.
bool made_in_place_after(int error) {
    return error == EEXIST || error == EPERM || error == EOPNOTSUPP || error == ENOSYS;
}

// The sweep of an existing database's folder, once per process and path: the dispatch
// library's miss log opens its database to write every few seconds.
bool first_sweep_of(const std::string& path) {
    static std::mutex mutex;
    static std::set<std::string>& swept = *new std::set<std::string>();  // never destroyed: see MissLog's writer_of
    std::lock_guard<std::mutex> lock(mutex);
    return swept.insert(path).second;
}

}  // namespace

bool publish_new_database(sqlite::Connection& source, const std::string& path,
                          const std::function<void(const std::string& file)>& before_copy) {
    remove_abandoned_incomplete_files(path);
    std::error_code ec;
    if (fs::is_symlink(path, ec) || fs::exists(path, ec)) return false;
    const std::string name = incomplete_name(path);
    // Empty, as VACUUM INTO takes it, with the permissions SQLite gives a database it makes.
    const int fd = ::open(name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) throw refused(path, "making " + printable(name), errno);
    ::close(fd);
    IncompleteFile incomplete(name);
    try {
        if (before_copy) before_copy(name);
        source.query("VACUUM INTO ?1").bind(1, sqlite::file_uri(name)).run();
        // In WAL mode, as a writer's open leaves a file: a later writer need not switch it,
        // which a reader holding it open would keep that writer from. Never made anew: a file
        // a sweep removed (remove_abandoned_incomplete_files, past its age) is an error here,
        // or at the sync or link below, not an empty database published.
        sqlite::Connection file(name, sqlite::Access::ReadWriteExisting, std::chrono::milliseconds(0));
        auto mode = file.query("PRAGMA journal_mode = WAL");
        if (!mode.step() || mode.text(0) != "wal")
            throw DbError(printable(name) + ": SQLite did not switch the new database to WAL mode", SQLITE_ERROR);
    } catch (const DbError& e) {
        throw DbError(std::string(e.what()) + "; so no database was made at " + printable(path), e.code, e.sql, e.reason);
    } catch (const Error& e) {  // before_copy's own (a file's identity it could not read)
        throw Error(std::string(e.what()) + "; so no database was made at " + printable(path));
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
        throw UnsyncedNewDatabase("cannot write " + printable(path) +
                                      ": syncing its folder after the new database was linked into place failed (" +
                                      std::error_code(error, std::generic_category()).message() +
                                      "): the database is there, but a power cut may lose it",
                                  SQLITE_IOERR_DIR_FSYNC);
    return true;
}

void remove_abandoned_incomplete_files(const std::string& path, std::chrono::seconds age) {
    // Beside `path` as given, where incomplete_name puts them (not beside a link's target).
    fs::path folder = fs::path(path).parent_path();
    if (folder.empty()) folder = ".";
    const std::string database = fs::path(path).filename().string();
    const std::time_t now = std::time(nullptr);
    if (now == static_cast<std::time_t>(-1) || age.count() < 0) return;
    // Written at or before this time: at an age of 0, every such file (the tests' sweeps).
    const std::time_t last_removed = now - static_cast<std::time_t>(std::min<std::int64_t>(age.count(), now));
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        if (!is_incomplete_file_of(it->path().filename().string(), database)) continue;
        // Looked at, never opened: a FIFO of the name would block an open, and a close of a
        // descriptor of a file (a hard link to the database, left between its publisher's link
        // and removal) would drop this process's SQLite locks on it. Regular files alone.
        struct stat file {};
        if (::lstat(it->path().c_str(), &file) == 0 && S_ISREG(file.st_mode) && file.st_mtime <= last_removed)
            ::unlink(it->path().c_str());
    }
}

void remove_abandoned_incomplete_files_once(const std::string& path) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(path, ec);  // "t.db" and "./t.db" are one path
    if (first_sweep_of(ec ? path : canonical.string())) remove_abandoned_incomplete_files(path);
}

}  // namespace sgemm
