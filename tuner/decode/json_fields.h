// Reading the flat JSON files the decode tools take (a model's config.json, a GPU spec), so
// that every failure names the file and the field: a missing key, a null, a string where a
// number belongs, a zero or negative size.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tuner/decode/json_document.h"

namespace sgemm {

class JsonFields {
public:
    // Parses the file (a regular file or a pipe, at most 4 MiB; "-" is standard input, which
    // may also be a terminal or a socket), which
    // must hold one JSON object; a missing file, a folder or device, malformed JSON (a key
    // twice in one object included) or another value is an Error naming the file.
    static JsonFields load(const std::string& path);
    // `missing_hint`, when given, ends the message of a field that is missing. A key twice in
    // `object` is an Error naming `source`.
    JsonFields(JsonValue object, std::string source, std::string missing_hint = "");

    const std::string& source() const { return source_; }

    // Present and not null.
    bool has(const std::string& key) const;
    // The field's value as written, or nullptr when absent.
    const JsonValue* find(const std::string& key) const { return object_.find(key); }
    // A string field's text; another kind of value fails.
    std::optional<std::string> text(const std::string& key) const;
    // An array of strings; another kind of value, or an element that is no string, fails.
    std::optional<std::vector<std::string>> string_list(const std::string& key) const;
    std::optional<bool> optional_bool(const std::string& key) const;

    long positive_integer(const std::string& key) const;
    long non_negative_integer(const std::string& key) const;
    std::optional<long> optional_positive_integer(const std::string& key) const;
    double positive_number(const std::string& key) const;

    // Fails on the first field not in `known`: in a file of a fixed set of fields (a GPU
    // spec), a misspelt one would otherwise be ignored, and what it set left at its default.
    void refuse_fields_other_than(const std::vector<std::string>& known) const;

    // An Error "<file>: field '<key>' <problem>".
    [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

private:
    // The field's value, which must be present, not null, and of this kind.
    const JsonValue& field(const std::string& key, JsonValue::Kind kind) const;
    // A whole number of at least `minimum`; `what` names the kind in the message.
    long integer_at_least(const std::string& key, long minimum, const char* what) const;

    JsonValue object_;
    std::string source_;
    std::string missing_hint_;
};

}  // namespace sgemm
