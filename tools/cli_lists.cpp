#include "tools/cli_lists.h"

#include <boost/program_options/errors.hpp>

#include <algorithm>
#include <limits>
#include <sstream>

#include "src/util/text.h"

namespace sgemm {

std::vector<int> parse_int_list(const std::string& text, const char* option, int min_value) {
    std::vector<int> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item = trim(item);  // "64, 128", as a list of names takes it
        std::size_t used = 0;
        int v = 0;
        try {
            v = std::stoi(item, &used);
        } catch (const std::out_of_range&) {
            // Sizes and batches are GEMM dimensions, which the tools and cuBLAS take as 32-bit.
            if (item[0] != '-')
                throw boost::program_options::error(std::string("--") + option + ": " + printable(item) + " is past " +
                                                    std::to_string(std::numeric_limits<int>::max()) +
                                                    ": the tools take 32-bit integers");
            used = 0;
        } catch (const std::invalid_argument&) {
            used = 0;
        }
        if (used != item.size() || item.empty() || v < min_value)
            throw boost::program_options::error(std::string("--") + option + ": " + single_quoted(item) + " is not " +
                                                (min_value == 1 ? "a positive integer" : "an integer of at least " + std::to_string(min_value)));
        out.push_back(v);
    }
    if (out.empty()) throw boost::program_options::error(std::string("--") + option + " is empty");
    // getline gives no empty last item: "1024," would pass as "1024" where "1024,,2048" fails.
    if (trim(text).back() == ',')
        throw boost::program_options::error(std::string("--") + option + ": " + single_quoted(text) + " ends with a comma");
    return out;
}

std::vector<int> parse_positive_int_list(const std::string& text, const char* option) {
    const std::vector<int> out = parse_int_list(text, option, 1);
    for (auto i = out.begin(); i != out.end(); ++i)
        if (std::find(out.begin(), i, *i) != i)
            throw boost::program_options::error(std::string("--") + option + ": " + std::to_string(*i) +
                                                " is given twice");
    return out;
}

std::vector<std::string> parse_name_list(const std::string& text, const char* option) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string item;
    const std::string whole = trim(text);
    bool empty_item = !whole.empty() && whole.back() == ',';  // getline gives no empty last item
    while (std::getline(ss, item, ',')) {
        item = trim(item);  // "decode, async": the space after a comma is no part of a name
        if (item.empty()) {
            empty_item = true;
            continue;
        }
        if (std::find(out.begin(), out.end(), item) != out.end())
            throw boost::program_options::error(std::string("--") + option + ": " + printable(item) + " is given twice");
        out.push_back(item);
    }
    if (out.empty()) throw boost::program_options::error(std::string("--") + option + " names nothing");
    // As in the lists of numbers: a doubled or stray comma is more likely a name left out
    // than nothing.
    if (empty_item)
        throw boost::program_options::error(std::string("--") + option + ": " + single_quoted(text) + " has an empty name");
    return out;
}

}  // namespace sgemm
