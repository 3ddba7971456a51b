// A JSON document as the decode tools read it (a model's config.json, a GPU spec). Each value
// keeps its kind, and each object every key as written, so a size written as a string
// ("4096") or a field given twice can be refused where a reader that keeps every scalar as
// text would accept it.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace sgemm {

struct JsonValue {
    enum class Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Kind::Null;
    // Number: the literal as written ("4096", "1.5e3"); String: the decoded text;
    // Bool: "true" or "false".
    std::string text;
    std::vector<JsonValue> items;    // an array's elements, an object's values
    std::vector<std::string> keys;   // an object's keys, parallel to items, repeats included

    // An object's value for `key` (the last given, as Python's json reads repeats), or nullptr.
    const JsonValue* find(const std::string& key) const;
};

// Malformed text: where (1-based line, and column in bytes) and what.
struct JsonSyntaxError : std::runtime_error {
    JsonSyntaxError(int line, int column, const std::string& problem);
    int line, column;
};

// The one value `text` holds (RFC 8259; a leading UTF-8 byte order mark is skipped). Nesting
// deeper than 256 levels is refused, so hostile input cannot exhaust the stack.
JsonValue parse_json(const std::string& text);

// "a string", "a number", ... for messages.
const char* json_kind_name(JsonValue::Kind kind);

}  // namespace sgemm
