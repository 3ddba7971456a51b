// A small JSON value for the tools' --json output: objects keep their keys in insertion
// order, so the files read in the order the code writes them.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace sgemm {

class Json {
public:
    Json() = default;  // null
    Json(bool b) : kind_(Kind::Bool), number_(b ? 1 : 0) {}
    Json(int v) : kind_(Kind::Integer), integer_(v) {}
    Json(long v) : kind_(Kind::Integer), integer_(v) {}
    Json(long long v) : kind_(Kind::Integer), integer_(v) {}
    Json(unsigned long v) : kind_(Kind::Integer), integer_(static_cast<long long>(v)) {}
    Json(unsigned long long v) : kind_(Kind::Integer), integer_(static_cast<long long>(v)) {}
    Json(double v) : kind_(Kind::Number), number_(v) {}
    Json(std::string s) : kind_(Kind::String), text_(std::move(s)) {}
    Json(const char* s) : kind_(Kind::String), text_(s) {}

    static Json array() { Json j; j.kind_ = Kind::Array; return j; }
    static Json object() { Json j; j.kind_ = Kind::Object; return j; }

    Json& push(Json value);                    // append to an array
    Json& set(std::string key, Json value);    // add or replace a key of an object

    // Compact with indent < 0, else pretty-printed with that many spaces per level.
    // Non-finite numbers become null, as JSON has no NaN.
    std::string dump(int indent = 2) const;

private:
    enum class Kind { Null, Bool, Integer, Number, String, Array, Object };
    void write(std::string& out, int indent, int depth) const;

    Kind kind_ = Kind::Null;
    long long integer_ = 0;
    double number_ = 0.0;
    std::string text_;
    std::vector<Json> items_;
    std::vector<std::string> keys_;  // parallel to items_ for objects
};

// `text` as a JSON string literal, quotes included.
std::string json_quote(const std::string& text);

}  // namespace sgemm
