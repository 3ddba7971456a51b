// The --db option of the tools that read or write the tuning database.
#pragma once
#include <boost/program_options.hpp>
#include <string>

namespace sgemm {

// The tuning database's path: --db's value, else the default rule's (db/default_path.h). An
// empty --db throws boost::program_options::error: it must not quietly mean the default. So
// do "-" and ":memory:" in --db or SGEMM_DB, which would make no file the user could find.
std::string database_path(const boost::program_options::variables_map& vm);

// Why a run that may make the database at `db_path` (a tune, sgemm-db import or merge) must
// not: the default path's folder is made with it, but a folder named through --db or SGEMM_DB
// that is not there is more likely a typo than a wish for a new folder. A symbolic link to no
// file yet is opened through, so its target's folder is the one. "" when nothing stands in
// the way here (the store's open finds any other problem).
std::string missing_folder_of_a_named_database(const boost::program_options::variables_map& vm,
                                               const std::string& db_path);

}  // namespace sgemm
