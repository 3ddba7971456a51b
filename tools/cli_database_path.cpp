#include "tools/cli_database_path.h"

#include <cstdlib>
#include <filesystem>
#include "db/default_path.h"
#include "src/util/file_on_the_way.h"
#include "src/util/text.h"
#include "tools/cli_output.h"

namespace sgemm {

namespace po = boost::program_options;

namespace {

// Names that SQLite or the tools read as no file: the database would not be where the user
// looks for it afterwards. `given` says where the name came from ("--db", "SGEMM_DB").
void refuse_names_of_no_file(const std::string& path, const std::string& given) {
    if (path == "-")
        throw po::error(given + " -: a database cannot be read from standard input or written to standard "
                                "output; write ./- for a file named -");
    // SQLite opens this name as a database in memory, which the tool's end loses (and a merge
    // or import into it waited for a lock no other process holds).
    if (path == ":memory:")
        throw po::error(given + " :memory: is SQLite's name for a database in memory, which is lost when the "
                                "tool ends; write ./:memory: for a file of that name");
}

}  // namespace

std::string database_path(const po::variables_map& vm) {
    if (!vm.count("db")) {
        // Of the default rule's paths only SGEMM_DB's can be such a name: the others end in
        // /tuning.db.
        const std::string path = default_db_path();
        refuse_names_of_no_file(path, "SGEMM_DB");
        return path;
    }
    const std::string path = vm["db"].as<std::string>();
    if (path.empty()) throw po::error(std::string("--db is empty (leave it out for the default database: ") +
                                      kDefaultDbPathRule + ")");
    refuse_names_of_no_file(path, "--db");
    return path;
}

std::string missing_folder_of_a_named_database(const po::variables_map& vm, const std::string& db_path) {
    std::error_code ec;
    const std::filesystem::path made = where_a_new_file_is_made(db_path);
    const std::filesystem::path folder = made.parent_path();
    const char* named_by_env = std::getenv("SGEMM_DB");
    const bool named = vm.count("db") || (named_by_env && *named_by_env);
    if (!named || folder.empty() || std::filesystem::exists(db_path, ec) || std::filesystem::is_directory(folder, ec))
        return "";
    const std::filesystem::path file = file_on_the_way(made);
    return std::string(vm.count("db") ? "--db " : "SGEMM_DB=") + printable(db_path) +
           (!file.empty() ? ": " + printable(file.string()) + " is not a folder"
                          : ": there is no folder " + printable(folder.string()) + " to make the database in (make it first)") +
           (made == std::filesystem::path(db_path) ? "" : "; the symbolic link points to " + printable(made.string()));
}

}  // namespace sgemm
