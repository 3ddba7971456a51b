// Why a path whose folders do not all exist cannot be made: a file where a folder should be.
#pragma once
#include <filesystem>
#include <system_error>

namespace sgemm {

// The nearest path above `path` that exists, where it is a file and not a folder ("tuning.db"
// of "tuning.db/x.db"), else empty. Such a path is not found, yet no folder made would mend
// it, as the messages for a missing database, folder or output file would advise. A path
// whose kind cannot be read (a folder this user may not search, a name too long) is no file
// in the way: it gives empty too.
inline std::filesystem::path file_on_the_way(const std::filesystem::path& path) {
    std::error_code ec;
    for (std::filesystem::path up = path.parent_path(); !up.empty() && up != up.root_path(); up = up.parent_path()) {
        const std::filesystem::file_status status = std::filesystem::status(up, ec);
        if (status.type() == std::filesystem::file_type::not_found) continue;
        return ec || std::filesystem::is_directory(status) ? std::filesystem::path() : up;
    }
    return std::filesystem::path();
}

}  // namespace sgemm
