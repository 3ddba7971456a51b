#include "tuner/decode/json_fields.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "src/util/error.h"

namespace sgemm {

JsonFields JsonFields::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open the file");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error(path + ": cannot read the file");
    JsonValue document;
    try {
        document = parse_json(text.str());
    } catch (const JsonSyntaxError& e) {
        throw Error(path + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": not valid JSON: " +
                    e.what());
    }
    if (document.kind != JsonValue::Kind::Object)
        throw Error(path + ": expected a JSON object ({...}) of fields, found " + json_kind_name(document.kind));
    return JsonFields(std::move(document), path);
}

JsonFields::JsonFields(JsonValue object, std::string source) : object_(std::move(object)), source_(std::move(source)) {}

bool JsonFields::has(const std::string& key) const {
    const JsonValue* v = object_.find(key);
    return v && v->kind != JsonValue::Kind::Null;
}

const JsonValue& JsonFields::field(const std::string& key, JsonValue::Kind kind) const {
    const JsonValue* v = object_.find(key);
    if (!v) fail(key, "is missing");
    if (v->kind == JsonValue::Kind::Null) fail(key, "is null");
    if (v->kind != kind) {
        std::string found = json_kind_name(v->kind);
        if (v->kind == JsonValue::Kind::String || v->kind == JsonValue::Kind::Bool || v->kind == JsonValue::Kind::Number)
            found += v->kind == JsonValue::Kind::String ? " (\"" + v->text + "\")" : " (" + v->text + ")";
        fail(key, std::string("must be ") + json_kind_name(kind) + ", not " + found);
    }
    return *v;
}

std::optional<std::string> JsonFields::text(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return field(key, JsonValue::Kind::String).text;
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
    const std::string value = field(key, JsonValue::Kind::Number).text;
    const std::optional<long> v = parse_whole<long>(value);
    if (!v || *v < 1) fail(key, "must be a positive integer, got " + value);
    return *v;
}

std::optional<long> JsonFields::optional_positive_integer(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return positive_integer(key);
}

double JsonFields::positive_number(const std::string& key) const {
    const std::string value = field(key, JsonValue::Kind::Number).text;
    const std::optional<double> v = parse_whole<double>(value);
    if (!v || !std::isfinite(*v) || *v <= 0) fail(key, "must be a positive number, got " + value);
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
