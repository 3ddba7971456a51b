// The --db option of the tools that read or write the tuning database.
#pragma once
#include <boost/program_options.hpp>
#include <string>

namespace sgemm {

// The tuning database's path: --db's value, else the default rule's (db/default_path.h). An
// empty --db throws boost::program_options::error: it must not quietly mean the default. So
// do "-" and ":memory:" in --db or SGEMM_DB, which would make no file the user could find.
std::string database_path(const boost::program_options::variables_map& vm);

}  // namespace sgemm
