#include "tools/decode_cli.h"

#include <optional>

#include "src/util/text.h"
#include "tools/cli_input.h"
#include "tools/cli_lists.h"
#include "tools/cli_parse.h"

namespace po = boost::program_options;

namespace sgemm {

void add_model_options(po::options_description& options, po::positional_options_description& positional,
                       const std::string& default_batches) {
    std::string names;
    for (const ModelConfig& m : builtin_models()) names += (names.empty() ? "" : ", ") + m.name;
    options.add_options()
        ("model", po::value<std::string>(), ("a built-in model: " + names + " (also the first argument)").c_str())
        ("config", po::value<std::string>(), "a Hugging Face style config.json instead (- reads standard input)")
        ("gated-mlp", po::value<std::string>(),
         "yes or no: whether the --config model's MLP has a gate projection beside the up "
         "projection (Llama: yes, GPT-2: no); needed only for a model_type the tool does not know, "
         "and refused where it contradicts one it knows")
        ("batch", po::value<std::string>()->default_value(default_batches),
         "batch sizes (sequences decoding together), comma-separated");
    positional.add("model", 1);
}

po::variables_map parse_command_line(int argc, char** argv, const po::options_description& options,
                                     const po::positional_options_description& positional) {
    // A word after the model is refused by name: an unquoted GPU name of two words
    // (--gpu H100 SXM) or a space after a comma (--batch 1, 8) leaves one over.
    po::variables_map vm;
    std::optional<std::string> stray;
    try {
        stray = store_command_line_collecting_strays(argc, argv, options, positional, vm);
    } catch (const po::multiple_occurrences& e) {
        if (e.get_option_name() != "--model") throw;
        throw po::error("the model is given twice (by the first argument or --model): give one");
    }
    if (vm.count("help")) return vm;  // the help comes first
    if (stray)
        throw po::error("unexpected argument " + single_quoted(*stray) + ": one model is read, the first argument, and "
                        "every other argument is an --option or its value (quote a value of several words)");
    po::notify(vm);
    return vm;
}

ModelConfig model_from_options(const po::variables_map& vm, const char* tool) {
    if (vm.count("model") == vm.count("config")) throw po::error("give a model name or --config FILE (one of them)");
    std::optional<bool> gated_mlp;
    if (vm.count("gated-mlp")) {
        if (vm.count("model")) throw po::error("--gated-mlp goes with --config: a built-in model knows its MLP");
        const std::string answer = chosen_word(vm["gated-mlp"].as<std::string>());
        if (answer != "yes" && answer != "no")
            throw po::error("--gated-mlp is yes or no, not " + single_quoted(vm["gated-mlp"].as<std::string>()));
        gated_mlp = answer == "yes";
    }
    if (vm.count("model")) return find_builtin_model(vm["model"].as<std::string>());
    const std::string config = vm["config"].as<std::string>();
    if (config.empty()) throw po::error("--config is empty: give the path of a model's config.json, or - for standard input");
    if (config == "-") say_when_reading_a_terminal(tool, "the model's config");
    return load_model_config(config, gated_mlp);
}

std::vector<long> batches_from_options(const po::variables_map& vm) {
    const std::vector<int> batches = parse_positive_int_list(vm["batch"].as<std::string>(), "batch");
    return std::vector<long>(batches.begin(), batches.end());
}

namespace {
// `arg` as a shell reads it back: as it is where it holds only characters no shell treats
// specially, else in single quotes, each ' in it written '\''. A control character (an
// invisible format character too: printable's set) or a byte outside UTF-8, which the comment
// line would show as \xNN, makes it bash's $'...', where \xNN stands for that byte.
std::string shell_quoted(const std::string& arg) {
    const bool plain = !arg.empty() && arg.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                              "0123456789_@%+=:,./-") == std::string::npos;
    if (plain) return arg;
    if (printable(arg) == arg) {
        std::string quoted = "'";
        for (const char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return quoted + "'";
    }
    std::string escaped;
    for (const char c : arg) escaped += c == '\'' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return "$'" + printable(escaped) + "'";
}
}  // namespace

std::string command_line(const char* tool, int argc, char** argv) {
    std::string text = tool;
    for (int i = 1; i < argc; ++i) text += " " + shell_quoted(argv[i]);
    return text;
}

}  // namespace sgemm
