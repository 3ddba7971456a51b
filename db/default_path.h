// Where the tuning database lives when no --db is given; sgemm-tune, sgemm-db and dispatch
// all use this, so they meet in the same file.
#pragma once
#include <string>

namespace sgemm {

// The rule, for --help texts.
constexpr const char* kDefaultDbPathRule =
    "$SGEMM_DB if set and not empty, else $XDG_DATA_HOME/sgemm/tuning.db where that is an absolute path, else "
    "~/.local/share/sgemm/tuning.db";

// The path the rule gives in this environment, "~" being $HOME, else the user's home in the
// password database; throws Error when it gives none (no SGEMM_DB, no XDG_DATA_HOME, no HOME
// and no home directory).
std::string default_db_path();

}  // namespace sgemm
