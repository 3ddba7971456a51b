#include "tuner/decode/json_fields.h"

#include <boost/property_tree/json_parser.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "src/util/error.h"

namespace sgemm {

JsonFields JsonFields::load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open the file");
    boost::property_tree::ptree tree;
    try {
        boost::property_tree::read_json(in, tree);
    } catch (const boost::property_tree::json_parser_error& e) {
        throw Error(path + ":" + std::to_string(e.line()) + ": not valid JSON: " + e.message());
    }
    return JsonFields(std::move(tree), path);
}

JsonFields::JsonFields(boost::property_tree::ptree tree, std::string source)
    : tree_(std::move(tree)), source_(std::move(source)) {}

// property_tree keeps every JSON scalar as text, null as "null", and objects and arrays as
// children with empty text.
bool JsonFields::has(const std::string& key) const {
    const auto child = tree_.get_child_optional(boost::property_tree::ptree::path_type(key, '\0'));
    return child && !(child->empty() && child->data() == "null");
}

std::string JsonFields::scalar(const std::string& key) const {
    const auto child = tree_.get_child_optional(boost::property_tree::ptree::path_type(key, '\0'));
    if (!child) fail(key, "is missing");
    if (!child->empty()) fail(key, "must be a single value, not an object or array");
    if (child->data() == "null") fail(key, "is null");
    return child->data();
}

std::optional<std::string> JsonFields::text(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return scalar(key);
}

namespace {

// The whole of `text` as a T ("4096.5" is no integer), or nothing.
template <typename T>
std::optional<T> parse_whole(const std::string& text) {
    std::istringstream in(text);
    T value{};
    if (!(in >> value) || !(in >> std::ws).eof()) return std::nullopt;
    return value;
}

}  // namespace

long JsonFields::positive_integer(const std::string& key) const {
    const std::string value = scalar(key);
    const std::optional<long> v = parse_whole<long>(value);
    if (!v || *v < 1) fail(key, "must be a positive integer, got '" + value + "'");
    return *v;
}

std::optional<long> JsonFields::optional_positive_integer(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return positive_integer(key);
}

double JsonFields::positive_number(const std::string& key) const {
    const std::string value = scalar(key);
    const std::optional<double> v = parse_whole<double>(value);
    if (!v || !std::isfinite(*v) || *v <= 0) fail(key, "must be a positive number, got '" + value + "'");
    return *v;
}

std::optional<double> JsonFields::optional_positive_number(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return positive_number(key);
}

void JsonFields::fail(const std::string& key, const std::string& problem) const {
    throw Error(source_ + ": field '" + key + "' " + problem);
}

}  // namespace sgemm
