// Reading the flat JSON files the decode tools take (a model's config.json, a GPU spec), so
// that every failure names the file and the field: a missing key, a null, a string where a
// number belongs, a zero or negative size.
#pragma once
#include <boost/property_tree/ptree.hpp>

#include <optional>
#include <string>

namespace sgemm {

class JsonFields {
public:
    // Parses the file; a missing file or malformed JSON is an Error naming the file.
    static JsonFields load(const std::string& path);
    JsonFields(boost::property_tree::ptree tree, std::string source);

    const std::string& source() const { return source_; }

    // Present and not null.
    bool has(const std::string& key) const;
    std::optional<std::string> text(const std::string& key) const;

    long positive_integer(const std::string& key) const;
    std::optional<long> optional_positive_integer(const std::string& key) const;
    double positive_number(const std::string& key) const;
    std::optional<double> optional_positive_number(const std::string& key) const;

    // An Error "<file>: field '<key>' <problem>".
    [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

private:
    std::string scalar(const std::string& key) const;  // the value's text; fails when absent

    boost::property_tree::ptree tree_;
    std::string source_;
};

}  // namespace sgemm
