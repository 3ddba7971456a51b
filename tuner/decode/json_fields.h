// Reading the flat JSON files the decode tools take (a model's config.json, a GPU spec), so
// that every failure names the file and the field: a missing key, a null, a string where a
// number belongs, a zero or negative size.
#pragma once
#include <optional>
#include <string>

#include "tuner/decode/json_document.h"

namespace sgemm {

class JsonFields {
public:
    // Parses the file, which must hold one JSON object; a missing file, malformed JSON
    // (a key twice in one object included) or another value is an Error naming the file.
    static JsonFields load(const std::string& path);
    JsonFields(JsonValue object, std::string source);

    const std::string& source() const { return source_; }

    // Present and not null.
    bool has(const std::string& key) const;
    // A string field's text; another kind of value fails.
    std::optional<std::string> text(const std::string& key) const;

    long positive_integer(const std::string& key) const;
    std::optional<long> optional_positive_integer(const std::string& key) const;
    double positive_number(const std::string& key) const;
    std::optional<double> optional_positive_number(const std::string& key) const;

    // An Error "<file>: field '<key>' <problem>".
    [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

private:
    // The field's value, which must be present, not null, and of this kind.
    const JsonValue& field(const std::string& key, JsonValue::Kind kind) const;

    JsonValue object_;
    std::string source_;
};

}  // namespace sgemm
