#include "tools/cli_parse.h"

#include <iostream>

#include "db/default_path.h"

namespace sgemm {

namespace po = boost::program_options;

bool parse_or_print_help(int argc, char** argv, const po::options_description& options, po::variables_map& vm) {
    // The tools take no positional arguments: a stray word (a second CSV, an option's value
    // given twice) is collected here and refused by name, not silently left out. The
    // collecting option's name starts with no letter, so no abbreviation a user types
    // (boost lets "--st" stand for "--strategy") can match it.
    const char* const stray = "~stray";
    po::options_description stray_words;
    stray_words.add_options()(stray, po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(stray_words);
    po::positional_options_description positional;
    positional.add(stray, -1);
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
        std::cout << options << "\n";
        return false;
    }
    po::notify(vm);
    if (vm.count(stray))
        throw po::error("unexpected argument '" + vm[stray].as<std::vector<std::string>>().front() +
                        "': every argument is an --option or its value");
    return true;
}

std::string database_path(const po::variables_map& vm) {
    if (!vm.count("db")) return default_db_path();
    const std::string path = vm["db"].as<std::string>();
    if (path.empty()) throw po::error(std::string("--db is empty (leave it out for the default database: ") +
                                      kDefaultDbPathRule + ")");
    return path;
}

}  // namespace sgemm
