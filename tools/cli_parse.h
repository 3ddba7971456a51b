// The command-line parse every tool starts with.
#pragma once
#include <boost/program_options.hpp>
#include <optional>
#include <string>

namespace sgemm {

// Parses argv against `options` into `vm`. With --help it prints the options and returns
// false: the tool then exits with finish_standard_output's status (0, or 2 when the help did
// not arrive). Bad options, and any argument that is not an option or
// an option's value, throw boost::program_options::error, which the tools report as a usage
// error.
bool parse_or_print_help(int argc, char** argv, const boost::program_options::options_description& options,
                         boost::program_options::variables_map& vm);

// Parses argc/argv with `parser` (its options, positional words and styles set) and stores the
// line in `vm`. A value that does not convert to its option's type (a size past 2147483647, a
// number past 1.8e308) is an error that says what the option takes, not only that the value
// "is invalid", and an option whose value would be the next option (`--json --dry-run`) is an
// error, not a file named "--dry-run". A number's value is read without the white space around
// it. The help comes first: with --help on the line only it and the positional words are
// stored, and a line with --help that boost cannot parse stores --help alone.
void store_command_line(boost::program_options::command_line_parser parser, int argc, char** argv,
                        const boost::program_options::options_description& options,
                        boost::program_options::variables_map& vm);

// store_command_line with the words that no option or `positional` takes collected, not
// refused by boost in its own words: the first of them, for the tool to refuse by name, after
// the help (which comes first).
std::optional<std::string> store_command_line_collecting_strays(
    int argc, char** argv, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional,
    boost::program_options::variables_map& vm);

// A usage error's message as the tools print it, before "Try '... --help'": one line, each
// control character escaped, a newline too (printable). Boost's messages and the tools' own
// quote the words typed as they are, and none is meant to span lines, so a newline typed into
// an option cannot print a line of its own.
std::string usage_error_text(const std::exception& e);

// parse(), with an exception it throws turned into boost::program_options::error: for an
// option's value read by a function of the library (a strategy, a list of families, an arch),
// so that the tool reports it as the usage error it is and points to --help.
template <typename Parse>
auto option_value(Parse&& parse) -> decltype(parse()) {
    try {
        return parse();
    } catch (const boost::program_options::error&) {
        throw;
    } catch (const std::exception& e) {
        throw boost::program_options::error(e.what());
    }
}

}  // namespace sgemm
