#include "tools/cli_output.h"

#include <boost/program_options/errors.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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

}  // namespace

// Nothing is opened or created: a probe write would change a FIFO's reader or leave a file
// (or a dangling link's target) behind.
void check_output_file(const std::string& path, const char* option) {
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

}  // namespace sgemm
