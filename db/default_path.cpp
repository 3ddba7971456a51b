#include "db/default_path.h"

#include <cstdlib>

#include "src/util/error.h"

namespace sgemm {

std::string default_db_path() {
    const auto env = [](const char* name) {
        const char* value = std::getenv(name);
        return std::string(value ? value : "");
    };
    if (!env("SGEMM_DB").empty()) return env("SGEMM_DB");
    // The XDG base-directory spec says to ignore a relative XDG_DATA_HOME.
    if (!env("XDG_DATA_HOME").empty() && env("XDG_DATA_HOME")[0] == '/')
        return env("XDG_DATA_HOME") + "/sgemm/tuning.db";
    if (!env("HOME").empty()) return env("HOME") + "/.local/share/sgemm/tuning.db";
    // Tools and the library both come here: name both ways of giving a path.
    throw Error(std::string("no database path: give one (--db to the tools, options.db_path to libsgemm_dispatch), "
                            "or set SGEMM_DB (the default is ") +
                kDefaultDbPathRule + ")");
}

}  // namespace sgemm
