#include "tools/cli_parse.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "src/util/text.h"

namespace sgemm {

namespace po = boost::program_options;

namespace {

// What option `option_name` ("--size", or "size") takes when it takes a number, for the
// message of a value that did not convert; empty for any other type. The limit is the type's,
// given in size only: an option that takes fewer values (none below 0, say) says so itself once
// its value has converted, and a range from the type's least value would contradict that.
std::string what_the_option_takes(const po::options_description& options, const std::string& option_name) {
    const std::size_t start = option_name.find_first_not_of('-');
    if (start == std::string::npos) return "";
    const po::option_description* option = options.find_nothrow(option_name.substr(start), false);
    if (!option) return "";
    const po::value_semantic* semantic = option->semantic().get();
    if (dynamic_cast<const po::typed_value<int>*>(semantic)) return "a whole number no larger in size than 2147483647";
    if (dynamic_cast<const po::typed_value<long>*>(semantic) || dynamic_cast<const po::typed_value<long long>*>(semantic))
        return "a whole number no larger in size than 9223372036854775807";
    if (dynamic_cast<const po::typed_value<double>*>(semantic)) return "a number no larger in size than about 1.8e308";
    return "";
}

// Whether all of `word` reads as a number ("-1", "-.5", "-inf").
bool is_number(const std::string& word) {
    char* end = nullptr;
    std::strtod(word.c_str(), &end);
    return end != word.c_str() && *end == '\0';
}

// An option that needs a value takes the next word, whatever it is: `--json --dry-run` wrote
// the table to a file named "--dry-run" and ran no dry run. A value taken from the next word
// that looks like an option ("--x", or "-" and a letter) is refused; "-" (standard input or
// output) and numbers stay values (the option's own check judges them), and
// `--json=--odd-name` still gives such a name.
void refuse_options_taken_as_values(const po::parsed_options& parsed) {
    for (const po::option& o : parsed.options) {
        if (o.original_tokens.size() != 2) continue;
        const std::string& word = o.original_tokens[1];
        if (word.size() > 1 && word[0] == '-' && (word[1] == '-' || std::isalpha(static_cast<unsigned char>(word[1]))) &&
            !is_number(word))
            throw po::error(o.original_tokens[0] + " needs a value, and the word after it is the option " + word +
                            " (write --" + o.string_key + "=" + word + " for a value that starts with -)");
    }
}

// Boost reads `-o=x` as the short option -o with the value "=x", and the tool then wrote a
// file named "=x". A short option joined to its value by "=" is refused, naming the two forms
// that say what was meant; `-o =x` and `--output==x` still give a value that starts with "=".
void refuse_short_options_joined_by_equals(const po::parsed_options& parsed) {
    for (const po::option& o : parsed.options) {
        if (o.position_key >= 0 || o.original_tokens.size() != 1 || o.value.empty()) continue;
        const std::string& word = o.original_tokens[0];
        if (word.size() > 2 && word[0] == '-' && word[1] != '-' && word[2] == '=')
            throw po::error(word + ": a short option is not joined to its value by '=' (write " + word.substr(0, 2) +
                            " " + word.substr(3) + " or --" + o.string_key + "=" + word.substr(3) + ")");
    }
}

// A number's value with the white space around it removed: `--context ' 5'` is 5, as
// `--batch ' 8'` is, whose list parse trims each item. Other values are kept as given (a
// file name may start with a space).
po::parsed_options numbers_trimmed(const po::parsed_options& parsed, const po::options_description& options) {
    po::parsed_options trimmed = parsed;
    for (po::option& o : trimmed.options) {
        if (what_the_option_takes(options, o.string_key).empty()) continue;
        for (std::string& value : o.value) value = trim(value);
    }
    return trimmed;
}

// parser.run() on argc/argv, with the help put first. A line with --help (or -h, or an
// abbreviation, or either where an option's value goes) keeps only it and the positional words (sgemm-db's command, whose help it asks
// for), and one that boost cannot parse (an unknown option, a value left out, a second model
// name) becomes --help alone: the help is shown, not an error about the line the user is
// asking how to write.
po::parsed_options parse_help_first(po::command_line_parser& parser, int argc, char** argv,
                                    const po::options_description& options) {
    po::parsed_options parsed(nullptr);
    try {
        parsed = parser.run();
    } catch (const po::error&) {
        const bool asks_for_help = std::any_of(argv + 1, argv + argc, [](const char* word) {
            return std::strcmp(word, "--help") == 0 || std::strcmp(word, "-h") == 0;
        });
        if (!asks_for_help) throw;
        const char* const help_alone[] = {argv[0], "--help"};
        return po::command_line_parser(2, help_alone).options(options).run();
    }
    // --help where a value goes (`--batch --help`) asks for the help too, as -h there does
    // (boost reads -h as an option, --help as --batch's value).
    const bool asks_for_help = std::any_of(parsed.options.begin(), parsed.options.end(), [](const po::option& o) {
        return o.string_key == "help" ||
               (o.original_tokens.size() == 2 && (o.original_tokens[1] == "--help" || o.original_tokens[1] == "-h"));
    });
    if (!asks_for_help) return parsed;
    parsed.options.erase(std::remove_if(parsed.options.begin(), parsed.options.end(),
                                        [](const po::option& o) { return o.position_key < 0; }),
                         parsed.options.end());
    po::option help("help", {});
    help.original_tokens = {"--help"};
    parsed.options.push_back(help);
    return parsed;
}

}  // namespace

void store_command_line(po::command_line_parser parser, int argc, char** argv, const po::options_description& options,
                        po::variables_map& vm) {
    const po::parsed_options parsed = parse_help_first(parser, argc, argv, options);
    refuse_options_taken_as_values(parsed);
    refuse_short_options_joined_by_equals(parsed);
    try {
        po::store(numbers_trimmed(parsed, options), vm);
    } catch (const po::invalid_option_value& e) {
        const std::string takes = what_the_option_takes(options, e.get_option_name());
        if (takes.empty()) throw;
        throw po::error(std::string(e.what()) + ": it takes " + takes);
    }
}

std::string usage_error_text(const std::exception& e) { return printable(e.what()); }

std::optional<std::string> store_command_line_collecting_strays(
    int argc, char** argv, const po::options_description& options,
    const po::positional_options_description& positional, po::variables_map& vm) {
    // The collecting option's name starts with no letter, so no abbreviation a user types
    // (boost lets "--st" stand for "--strategy") can match it.
    const char* const stray = "~stray";
    po::options_description stray_words;
    stray_words.add_options()(stray, po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(stray_words);
    po::positional_options_description with_strays = positional;
    with_strays.add(stray, -1);
    store_command_line(po::command_line_parser(argc, argv).options(all).positional(with_strays), argc, argv, all, vm);
    if (!vm.count(stray)) return std::nullopt;
    return vm[stray].as<std::vector<std::string>>().front();
}

bool parse_or_print_help(int argc, char** argv, const po::options_description& options, po::variables_map& vm) {
    // The tools take no positional arguments: a stray word (a second CSV, an option's value
    // given twice) is refused by name, not silently left out.
    const std::optional<std::string> stray =
        store_command_line_collecting_strays(argc, argv, options, po::positional_options_description(), vm);
    if (vm.count("help")) {
        std::cout << options << "\n";
        return false;
    }
    po::notify(vm);
    if (stray) throw po::error("unexpected argument " + single_quoted(*stray) + ": every argument is an --option or its value");
    return true;
}

}  // namespace sgemm
