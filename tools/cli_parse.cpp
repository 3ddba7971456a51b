#include "tools/cli_parse.h"

#include <iostream>

namespace sgemm {

namespace po = boost::program_options;

bool parse_or_print_help(int argc, char** argv, const po::options_description& options, po::variables_map& vm) {
    // The tools take no positional arguments: a stray word (a second CSV, an option's value
    // given twice) is collected here and refused by name, not silently left out.
    po::options_description stray;
    stray.add_options()("stray-argument", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(stray);
    po::positional_options_description positional;
    positional.add("stray-argument", -1);
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("stray-argument"))
        throw po::error("unexpected argument '" + vm["stray-argument"].as<std::vector<std::string>>().front() +
                        "': every argument is an --option or its value");
    if (vm.count("help")) {
        std::cout << options << "\n";
        return false;
    }
    return true;
}

}  // namespace sgemm
