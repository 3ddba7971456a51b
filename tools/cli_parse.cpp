#include "tools/cli_parse.h"

#include <iostream>

namespace sgemm {

namespace po = boost::program_options;

bool parse_or_print_help(int argc, char** argv, const po::options_description& options, po::variables_map& vm) {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << options << "\n";
        return false;
    }
    return true;
}

}  // namespace sgemm
