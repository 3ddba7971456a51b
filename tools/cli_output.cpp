#include "tools/cli_output.h"

#include <boost/program_options/errors.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "src/util/file_on_the_way.h"
#include "src/util/text.h"
#include "tools/cli_input.h"

namespace sgemm {
namespace fs = std::filesystem;

namespace {

// The path is escaped here, where the message is made: the tools print a message's line breaks
// (printable_lines), so a newline in a path would start a line of its own.
[[noreturn]] void refuse(const char* option, const std::string& path, const std::string& why) {
    throw boost::program_options::error(std::string("--") + option + " " + printable(path) + ": " + why);
}

// Why the folder `path` needs is missing: a file where a folder should be ("out.csv" of
// "out.csv/x.csv"), which no folder made would mend, else `otherwise`.
std::string why_no_folder_above(const fs::path& path, const std::string& otherwise) {
    const fs::path file = file_on_the_way(path);
    return file.empty() ? otherwise : printable(file.string()) + " is not a folder";
}

// Whether this process may write `path` (W_OK), or create entries in it as a folder (W_OK | X_OK).
void require_access(const char* option, const std::string& path, const std::string& checked, int mode) {
    if (access(checked.c_str(), mode) != 0) refuse(option, path, std::string("cannot write it (") + std::strerror(errno) + ")");
}

[[noreturn]] void cannot_write(const std::string& path) {
    throw OutputError("cannot write " + printable(path) + ": " + std::strerror(errno));
}

// Writes all of `text` to `fd`; 0, or errno of the failure.
int write_all(int fd, const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n > 0)
            done += static_cast<std::size_t>(n);
        else if (n == 0 || errno != EINTR)
            return n == 0 ? ENOSPC : errno;
    }
    return 0;
}

// write_all, then (`sync`) waits until it is on the disk, then closes `fd` either way (a
// quota can fail at close).
void write_all_and_close(int fd, const std::string& text, bool sync, const std::string& path) {
    int reason = write_all(fd, text);
    if (reason == 0 && sync && ::fsync(fd) != 0) reason = errno;
    if (::close(fd) != 0 && reason == 0) reason = errno;
    if (reason != 0) {
        errno = reason;
        cannot_write(path);
    }
}

// Creates a new file in `folder` with the permissions open() gives a new file (0666 less
// the umask) and returns its descriptor, its path in `created`; -1 with errno on failure. The
// name is short, whatever the target's length.
int create_temporary(const fs::path& folder, std::string& created) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        created = (folder / (".sgemm-output." + std::to_string(::getpid()) + "." + std::to_string(attempt) + ".tmp")).string();
        const int fd = ::open(created.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

// The descriptor of standard output or standard error when `st` is the file behind it (-o
// /dev/stdout, or that file by its name), else -1: that one is written through the stream's
// own descriptor, at its offset, neither replaced nor cut short.
int standard_stream_of(const struct stat& st) {
    for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
        struct stat stream {};
        if (::fstat(fd, &stream) == 0 && stream.st_dev == st.st_dev && stream.st_ino == st.st_ino) return fd;
    }
    return -1;
}

// What `path` holds when it is an SQLite database's write-ahead log or rollback journal (by
// their magic numbers), whatever its name, else "".
std::string sqlite_companion_kind(const std::string& path) {
    unsigned char start[8] = {};
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(start), sizeof start)) return "";
    static const unsigned char journal[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
    if (std::memcmp(start, journal, sizeof journal) == 0) return "an SQLite rollback journal";
    if (start[0] == 0x37 && start[1] == 0x7f && start[2] == 0x06 && (start[3] == 0x82 || start[3] == 0x83))
        return "an SQLite write-ahead log";
    return "";
}

// Truncates (or creates) `path` and writes `text` into it.
void write_in_place(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) cannot_write(path);
    struct stat st {};
    write_all_and_close(fd, text, ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode), path);
}

}  // namespace

// Nothing is opened or created: a probe write would change a FIFO's reader or leave a file
// (or a dangling link's target) behind.
void check_output_file(const std::string& path, const char* option) {
    // The tools read an absent option as "no file": an empty one must not quietly mean the same.
    if (path.empty()) throw boost::program_options::error(std::string("--") + option + " is empty");
    // "-" is standard input where the tools read (--shapes -); as an output it wrote a file
    // named "-", which a user meaning standard output would not look for.
    if (path == "-")
        refuse(option, path, "names no file here (standard output is where the tool prints without this option); "
                             "write ./- for a file named -");
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);  // through symbolic links
    // A loop of links reads as no file, and only the write at the end of the run would fail.
    if (ec == std::errc::too_many_symbolic_link_levels) refuse(option, path, "is a loop of symbolic links");
    if (fs::is_directory(status)) refuse(option, path, "is a folder, not a file");
    if (fs::exists(status)) {
        // A FIFO or a device (/dev/stdout) is written as it is; a file must be writable, and
        // no database: every output of these tools is text, and a database named by a slip
        // (`sgemm-db export -o tuning.db`) would lose every winner it holds.
        if (fs::is_regular_file(status)) {
            if (starts_as_sqlite(path))
                refuse(option, path, "is an SQLite database, which this output would replace; remove it first "
                                     "or name another file");
            // Any database's log or journal: replaced, it loses the commits not yet in the file.
            if (const std::string kind = sqlite_companion_kind(path); !kind.empty())
                refuse(option, path, "is " + kind + ", which this output would replace, losing commits not yet "
                                     "in its database; name another file");
        }
        // A FIFO or a device too: a run would otherwise do all its work and then fail to write.
        require_access(option, path, path, W_OK);
        return;
    }
    // A symbolic link to no file yet is written through: the file made is where it points.
    const fs::path made = where_a_new_file_is_made(path);
    const std::string pointed =
        made == fs::path(path) ? "" : " (where the symbolic link points: " + printable(made.string()) + ")";
    const fs::path parent = made.parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    if (!fs::is_directory(folder, ec)) refuse(option, path, why_no_folder_above(made, "no folder " + printable(folder)) + pointed);
    require_access(option, path, folder, W_OK | X_OK);
    const long name_max = pathconf(folder.c_str(), _PC_NAME_MAX);
    if (name_max > 0 && made.filename().string().size() > static_cast<std::size_t>(name_max))
        refuse(option, path, "its name is " + std::to_string(made.filename().string().size()) +
                                 " bytes long, and a file's name in " + printable(folder) + " may have " +
                                 std::to_string(name_max) + pointed);
}

std::filesystem::path where_a_new_file_is_made(const std::string& path) {
    std::error_code ec;
    fs::path made = path;
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(made, ec)); ++hops) {
        const fs::path to = fs::read_symlink(made, ec);
        if (ec) break;
        made = to.is_absolute() ? to : made.parent_path() / to;
    }
    return made;
}

void check_output_folder(const std::string& path, const char* option) {
    if (path.empty()) throw boost::program_options::error(std::string("--") + option + " is empty");
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_directory(path, ec)) refuse(option, path, "is a file, not a folder");
    if (!fs::is_directory(path, ec)) refuse(option, path, why_no_folder_above(path, "no such folder"));
    require_access(option, path, path, W_OK | X_OK);
}

namespace {
bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec, ec_a, ec_b;
    if (fs::equivalent(a, b, ec)) return true;
    if (!ec) return false;  // both exist, and are two files
    // equivalent() needs both to exist: compare the paths themselves, made absolute first (a
    // relative path whose first part does not exist stays relative in weakly_canonical), each
    // where a symbolic link to no file yet would make it (weakly_canonical keeps such a link).
    const fs::path path_a = fs::weakly_canonical(fs::absolute(where_a_new_file_is_made(a), ec_a), ec_a),
                   path_b = fs::weakly_canonical(fs::absolute(where_a_new_file_is_made(b), ec_b), ec_b);
    return !ec_a && !ec_b && path_a == path_b;
}
}  // namespace

void check_output_is_not(const std::string& output, const char* option, const std::string& input,
                         const std::string& what) {
    if (!input.empty() && same_file(output, input))
        refuse(option, output, "is " + what + ", which the output would replace");
}

void check_output_is_not_input(const std::string& output, const char* option, const std::string& input,
                               const std::string& what) {
    if (input != "-") return check_output_is_not(output, option, input, what);
    // Only a regular file can be replaced: a terminal or pipe behind stdin is no file to lose.
    struct stat in {};
    if (::fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode) && reads_standard_input(output))
        refuse(option, output, "is " + what + " behind standard input, which the output would replace");
}

void check_output_is_not_database(const std::string& output, const char* option, const std::string& db_path) {
    check_output_is_not(output, option, db_path, "the tuning database");
    // SQLite keeps its files beside the file itself: beside a symbolic link's target.
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(where_a_new_file_is_made(db_path), ec), ec);
    for (const std::string& base : {db_path, resolved.string()})
        for (const auto& [suffix, what] : {std::pair<const char*, const char*>{"-wal", "write-ahead log"},
                                           {"-shm", "shared-memory file"},
                                           {"-journal", "rollback journal"}})
            check_output_is_not(output, option, base + suffix, std::string("the tuning database's ") + what);
}

void write_output_file(const std::string& path, const std::string& text) {
    // Replaced by a whole new file only where that changes nothing but the contents: a plain
    // regular file of this user with one name (the new one takes its mode and group), or a new
    // file; through a symbolic link, the file it leads to (the link stays, and leads to the
    // new file). Anything else (a FIFO, a device, a file with other names or another owner,
    // the file behind standard output) is written in place, as the tools did before, at the
    // old risk.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (const int stream = standard_stream_of(st); stream >= 0) {
            std::fflush(nullptr);  // what the tool printed there comes first
            if (const int reason = write_all(stream, text); reason != 0) {
                errno = reason;
                cannot_write(path);
            }
            return;
        }
    }
    // A write through a link cut short (a full disk) left the file it leads to cut short.
    const std::string target = where_a_new_file_is_made(path).string();
    const bool exists = ::lstat(target.c_str(), &st) == 0;
    if (exists && (!S_ISREG(st.st_mode) || st.st_nlink > 1 || st.st_uid != ::geteuid()))
        return write_in_place(path, text);
    const fs::path folder = fs::path(target).parent_path().empty() ? fs::path(".") : fs::path(target).parent_path();
    std::string temporary;
    const int fd = create_temporary(folder, temporary);
    // A folder where no new file may be made: in place, as before. A full disk is not that:
    // writing in place would cut the old file short and still fail.
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) return write_in_place(path, text);
    if (fd < 0) cannot_write(path);
    // The old file's group, which the new one takes from this process or the folder: where
    // this user may not give it that group (one they are not in), in place, as before.
    if (exists && ::fchown(fd, static_cast<uid_t>(-1), st.st_gid) != 0) {
        ::close(fd);
        ::unlink(temporary.c_str());
        return write_in_place(path, text);
    }
    try {
        if (exists && ::fchmod(fd, st.st_mode & 07777) != 0) {
            const int reason = errno;
            ::close(fd);
            errno = reason;
            cannot_write(path);
        }
        write_all_and_close(fd, text, true, path);  // a full disk throws here, the old file untouched
    } catch (...) {
        ::unlink(temporary.c_str());
        throw;
    }
    // A file that cannot be replaced (a bind mount: EBUSY): in place, as before.
    if (::rename(temporary.c_str(), target.c_str()) != 0) {
        ::unlink(temporary.c_str());
        write_in_place(path, text);
    }
}

void treat_a_closed_pipe_as_a_write_error() { std::signal(SIGPIPE, SIG_IGN); }

namespace {
// The reason of the first write to standard output that failed in send_standard_output: by
// finish_standard_output's own flush, with nothing left to write, errno no longer holds it.
int failed_output_errno = 0;
}  // namespace

bool send_standard_output() {
    // Only these flushes' errno is the failure's (cout's flushes the C stream too, which is
    // where the write fails): after a failed write of a full buffer (one printf's), stdio has
    // dropped what it held, the flush succeeds, and errno is whatever the work since then left.
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0 && !std::ferror(stdout);
    if (!flushed && failed_output_errno == 0) failed_output_errno = errno;
    return flushed;
}

int finish_standard_output(const char* tool, const std::string& what) {
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;  // the C stream's buffer too, whatever cout's state: sets errno
    if (static_cast<bool>(std::cout) && flushed && !std::ferror(stdout)) return 0;
    const int reason = failed_output_errno != 0 ? failed_output_errno : errno;
    std::fprintf(stderr, "%s: cannot write %s: %s\n", tool, printable(what).c_str(),
                 reason != 0 ? std::strerror(reason) : "the write failed (a full disk or a closed pipe?)");
    return 2;
}

int write_output_file_after_work(const char* tool, const std::string& path, const std::string& text) {
    try {
        write_output_file(path, text);
        return 0;
    } catch (const OutputError& e) {
        std::fprintf(stderr, "%s: %s\n", tool, printable_lines(e.what()).c_str());
        return 2;
    }
}

int finish_standard_output_after_work(const char* tool, const std::string& what) {
    errno = 0;
    return finish_standard_output(tool, what);
}

}  // namespace sgemm
