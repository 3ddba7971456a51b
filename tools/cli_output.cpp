#include "tools/cli_output.h"

#include <boost/program_options/errors.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace sgemm {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const char* option, const std::string& path, const std::string& why) {
    throw boost::program_options::error(std::string("--") + option + " " + path + ": " + why);
}

// Whether this process may write `path` (W_OK), or create entries in it as a folder (W_OK | X_OK).
void require_access(const char* option, const std::string& path, const std::string& checked, int mode) {
    if (access(checked.c_str(), mode) != 0) refuse(option, path, std::string("cannot write it (") + std::strerror(errno) + ")");
}

[[noreturn]] void cannot_write(const std::string& path) {
    throw OutputError("cannot write " + path + ": " + std::strerror(errno));
}

// Writes all of `text` to `fd`; `sync`: and waits until it is on the disk. Closes `fd`
// either way (a quota can fail at close).
void write_all_and_close(int fd, const std::string& text, bool sync, const std::string& path) {
    int reason = 0;
    for (std::size_t done = 0; done < text.size() && reason == 0;) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n > 0)
            done += static_cast<std::size_t>(n);
        else if (n == 0 || errno != EINTR)
            reason = n == 0 ? ENOSPC : errno;
    }
    if (reason == 0 && sync && ::fsync(fd) != 0) reason = errno;
    if (::close(fd) != 0 && reason == 0) reason = errno;
    if (reason != 0) {
        errno = reason;
        cannot_write(path);
    }
}

// Creates a new file in `folder` next to `name`, with the permissions open() gives a new file
// (0666 less the umask), and returns its descriptor; its path in `created`.
int create_temporary(const fs::path& folder, const std::string& name, std::string& created) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        created = (folder / ("." + name + "." + std::to_string(::getpid()) + "." + std::to_string(attempt) + ".tmp")).string();
        const int fd = ::open(created.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

}  // namespace

// Nothing is opened or created: a probe write would change a FIFO's reader or leave a file
// (or a dangling link's target) behind.
void check_output_file(const std::string& path, const char* option) {
    // The tools read an absent option as "no file": an empty one must not quietly mean the same.
    if (path.empty()) throw boost::program_options::error(std::string("--") + option + " is empty");
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);  // through symbolic links
    if (fs::is_directory(status)) refuse(option, path, "is a folder, not a file");
    if (fs::exists(status)) {
        // A FIFO or a device (/dev/stdout) is written as it is; a file must be writable.
        if (fs::is_regular_file(status)) require_access(option, path, path, W_OK);
        return;
    }
    const fs::path parent = fs::path(path).parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    if (!fs::is_directory(folder, ec)) refuse(option, path, "no folder " + folder);
    require_access(option, path, folder, W_OK | X_OK);
}

void check_output_folder(const std::string& path, const char* option) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) refuse(option, path, "no such folder");
    require_access(option, path, path, W_OK | X_OK);
}

void write_output_file(const std::string& path, const std::string& text) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);  // through symbolic links
    auto write_in_place = [&](int flags, bool sync) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags);
        if (fd < 0) cannot_write(path);
        write_all_and_close(fd, text, sync, path);
    };
    if (fs::exists(status) && !fs::is_regular_file(status)) return write_in_place(0, false);
    // Renaming over a link would replace the link, not the file it names.
    const fs::path target = fs::is_symlink(fs::symlink_status(path, ec)) ? fs::weakly_canonical(path, ec) : fs::path(path);
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::string temporary;
    const int fd = create_temporary(folder, target.filename().string(), temporary);
    // A file this process may write in a folder where it may not create one: written in
    // place, as before there were temporary files, without their guarantee.
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS) && fs::is_regular_file(status) &&
        ::access(path.c_str(), W_OK) == 0)
        return write_in_place(O_TRUNC, true);
    if (fd < 0) cannot_write(path);
    struct stat existing {};
    try {
        if (::stat(target.c_str(), &existing) == 0 && ::fchmod(fd, existing.st_mode & 07777) != 0) {
            const int reason = errno;
            ::close(fd);
            errno = reason;
            cannot_write(path);
        }
        write_all_and_close(fd, text, true, path);
        if (::rename(temporary.c_str(), target.c_str()) != 0) cannot_write(path);
    } catch (...) {
        ::unlink(temporary.c_str());
        throw;
    }
}

int finish_standard_output(const char* tool, const std::string& what) {
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;  // the C stream's buffer too, whatever cout's state: sets errno
    if (static_cast<bool>(std::cout) && flushed && !std::ferror(stdout)) return 0;
    std::fprintf(stderr, "%s: cannot write %s: %s\n", tool, what.c_str(),
                 errno != 0 ? std::strerror(errno) : "the write failed (a full disk or a closed pipe?)");
    return 2;
}

}  // namespace sgemm
