// The command-line parse every tool starts with.
#pragma once
#include <boost/program_options.hpp>

namespace sgemm {

// Parses argv against `options` into `vm`. With --help it prints the options and returns
// false: the tool then exits with finish_standard_output's status (0, or 2 when the help did
// not arrive). Bad options, and any argument that is not an option or
// an option's value, throw boost::program_options::error, which the tools report as a usage
// error.
bool parse_or_print_help(int argc, char** argv, const boost::program_options::options_description& options,
                         boost::program_options::variables_map& vm);

}  // namespace sgemm
