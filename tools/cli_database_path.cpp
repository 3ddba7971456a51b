#include "tools/cli_database_path.h"

#include "db/default_path.h"

namespace sgemm {

namespace po = boost::program_options;

std::string database_path(const po::variables_map& vm) {
    if (!vm.count("db")) return default_db_path();
    const std::string path = vm["db"].as<std::string>();
    if (path.empty()) throw po::error(std::string("--db is empty (leave it out for the default database: ") +
                                      kDefaultDbPathRule + ")");
    return path;
}

}  // namespace sgemm
