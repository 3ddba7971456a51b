#include "db/default_path.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "src/util/error.h"

namespace sgemm {
namespace {
// The home directory of this process's user in the password database, or "": what "~" means
// to a shell without HOME, as in a service started without one.
std::string home_of_this_user() {
    long size = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(size > 0 ? static_cast<std::size_t>(size) : 16384);
    passwd entry{};
    passwd* found = nullptr;
    if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found || !found->pw_dir)
        return "";
    return found->pw_dir;
}
}  // namespace

std::string default_db_path() {
    const auto env = [](const char* name) {
        const char* value = std::getenv(name);
        return std::string(value ? value : "");
    };
    if (!env("SGEMM_DB").empty()) return env("SGEMM_DB");
    // The XDG base-directory spec says to ignore a relative XDG_DATA_HOME.
    if (!env("XDG_DATA_HOME").empty() && env("XDG_DATA_HOME")[0] == '/')
        return env("XDG_DATA_HOME") + "/sgemm/tuning.db";
    const std::string home = env("HOME").empty() ? home_of_this_user() : env("HOME");
    if (!home.empty()) return home + "/.local/share/sgemm/tuning.db";
    // Tools and the library both come here: name both ways of giving a path.
    throw Error(std::string("no database path: give one (--db to the tools, options.db_path to libsgemm_dispatch), "
                            "or set SGEMM_DB (the default is ") +
                kDefaultDbPathRule + ")");
}

}  // namespace sgemm
