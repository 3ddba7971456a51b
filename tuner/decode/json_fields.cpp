#include "tuner/decode/json_fields.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "src/util/error.h"
#include "src/util/text.h"

namespace sgemm {

namespace {

// Model configs and GPU specs are a few kilobytes; the document tree takes up to about 50
// times its text, so a file larger than this is refused rather than read.
constexpr std::size_t kMaxFileBytes = std::size_t{4} << 20;

}  // namespace

JsonFields JsonFields::load(const std::string& path) {
    // "-" is standard input, named so in messages, and read from the descriptor the process
    // was given: a socket cannot be opened again by a name (/dev/stdin fails on it).
    const bool standard_input = path == "-";
    const std::string name = standard_input ? "standard input" : path;
    const std::string shown = printable(name);  // in messages
    // A folder or a device is refused before it is opened (/dev/zero would never end); a pipe
    // is read, as from `--config <(...)`, up to the same limit as a file. Standard input may
    // also be a terminal (text typed and ended with Ctrl-D) or a socket (ssh, a subprocess).
    struct stat info;
    if ((standard_input ? fstat(STDIN_FILENO, &info) : stat(path.c_str(), &info)) != 0)
        throw Error(shown + ": cannot open the file: " + std::strerror(errno));
    if (S_ISDIR(info.st_mode)) throw Error(shown + ": is a folder, not a JSON file");
    const bool stream_of_stdin =
        standard_input && (S_ISSOCK(info.st_mode) || (S_ISCHR(info.st_mode) && isatty(STDIN_FILENO)));
    if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode) && !stream_of_stdin)
        throw Error(shown + ": is not a regular file or a pipe");
    std::ifstream file;
    if (!standard_input) {
        file.open(path, std::ios::binary);
        if (!file) throw Error(shown + ": cannot open the file: " + std::strerror(errno));
    }
    std::istream& in = standard_input ? std::cin : file;
    std::string text(kMaxFileBytes + 1, '\0');
    in.read(&text[0], static_cast<std::streamsize>(text.size()));
    if (in.bad()) throw Error(shown + ": cannot read the file");
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
        throw Error(shown + ": is larger than " + std::to_string(kMaxFileBytes >> 20) +
                    " MiB, too large for a config file");
    JsonValue document;
    try {
        document = parse_json(text);
    } catch (const JsonSyntaxError& e) {
        throw Error(shown + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": not valid JSON: " +
                    e.what());
    }
    if (document.kind != JsonValue::Kind::Object)
        throw Error(shown + ": expected a JSON object ({...}) of fields, found " + json_kind_name(document.kind));
    return JsonFields(std::move(document), name);
}

JsonFields::JsonFields(JsonValue object, std::string source, std::string missing_hint)
    : object_(std::move(object)), source_(std::move(source)), missing_hint_(std::move(missing_hint)) {
    // A field given twice is ambiguous to a reader (Python takes the last), in the file's
    // object and in one read as fields (a text_config); nested objects the tools never read
    // may repeat keys as they like.
    std::set<std::string> seen;
    for (const std::string& key : object_.keys)
        if (!seen.insert(key).second) throw Error(printable(source_) + ": field '" + printable(key) + "' is given twice");
}

void JsonFields::refuse_fields_other_than(const std::vector<std::string>& known) const {
    for (const std::string& key : object_.keys) {
        if (std::find(known.begin(), known.end(), key) != known.end()) continue;
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(key, "is not one this file may hold (" + list + ")");
    }
}

bool JsonFields::has(const std::string& key) const {
    const JsonValue* v = object_.find(key);
    return v && v->kind != JsonValue::Kind::Null;
}

const JsonValue& JsonFields::field(const std::string& key, JsonValue::Kind kind) const {
    const JsonValue* v = object_.find(key);
    if (!v) fail(key, "is missing" + (missing_hint_.empty() ? "" : ": " + missing_hint_));
    if (v->kind == JsonValue::Kind::Null) fail(key, "is null");
    if (v->kind != kind) {
        std::string found = json_kind_name(v->kind);  // with the value, when it is a scalar
        if (v->kind == JsonValue::Kind::String)
            found += " (\"" + printable(v->text) + "\")";
        else if (v->kind == JsonValue::Kind::Bool || v->kind == JsonValue::Kind::Number)
            found += " (" + v->text + ")";
        fail(key, std::string("must be ") + json_kind_name(kind) + ", not " + found);
    }
    return *v;
}

std::optional<std::string> JsonFields::text(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return field(key, JsonValue::Kind::String).text;
}

std::optional<std::vector<std::string>> JsonFields::string_list(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    std::vector<std::string> list;
    for (const JsonValue& item : field(key, JsonValue::Kind::Array).items) {
        if (item.kind != JsonValue::Kind::String)
            fail(key, std::string("must be an array of strings, not of ") + json_kind_name(item.kind) + "s");
        list.push_back(item.text);
    }
    return list;
}

std::optional<bool> JsonFields::optional_bool(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return field(key, JsonValue::Kind::Bool).text == "true";
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

long JsonFields::integer_at_least(const std::string& key, long minimum, const char* what) const {
    const std::string value = field(key, JsonValue::Kind::Number).text;
    const std::optional<long> v = parse_whole<long>(value);
    if (!v || *v < minimum) fail(key, std::string("must be ") + what + ", got " + value);
    return *v;
}

long JsonFields::positive_integer(const std::string& key) const { return integer_at_least(key, 1, "a positive integer"); }

long JsonFields::non_negative_integer(const std::string& key) const {
    return integer_at_least(key, 0, "a non-negative integer");
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

void JsonFields::fail(const std::string& key, const std::string& problem) const {
    throw Error(printable(source_) + ": field " + single_quoted(key) + " " + problem);
}

}  // namespace sgemm
