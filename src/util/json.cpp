#include "src/util/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "src/util/error.h"
#include "src/util/utf8.h"

namespace sgemm {

Json& Json::push(Json value) {
    if (kind_ != Kind::Array) throw Error("Json::push on a value that is not an array");
    items_.push_back(std::move(value));
    return *this;
}

Json& Json::set(std::string key, Json value) {
    if (kind_ != Kind::Object) throw Error("Json::set on a value that is not an object");
    for (std::size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i] == key) {
            items_[i] = std::move(value);
            return *this;
        }
    keys_.push_back(std::move(key));
    items_.push_back(std::move(value));
    return *this;
}

// JSON text is UTF-8: a byte that is not part of a well-formed sequence (a file name in
// another encoding) becomes U+FFFD, so the output always parses.
std::string json_quote(const std::string& text) {
    std::string out = "\"";
    const std::string utf8 = as_utf8(text);
    for (const unsigned char c : utf8) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string Json::dump(int indent) const {
    std::string out;
    write(out, indent, 0);
    return out;
}

void Json::write(std::string& out, int indent, int depth) const {
    const auto newline = [&](int level) {
        if (indent < 0) return;
        out += '\n';
        out.append(static_cast<std::size_t>(indent * level), ' ');
    };
    switch (kind_) {
        case Kind::Null: out += "null"; return;
        case Kind::Bool: out += number_ != 0 ? "true" : "false"; return;
        case Kind::Integer: out += std::to_string(integer_); return;
        case Kind::Number: {
            if (!std::isfinite(number_)) {
                out += "null";
                return;
            }
            // A whole number that a double holds exactly is written as an integer: a count of
            // bytes such as 3.32398592e+10 is refused by readers that parse counts as integers.
            // Others take the fewest digits, from 9, that read back as the same double: exact,
            // so a count such as 2^30 FLOPs is not rounded to 1.07374182e+09.
            char buf[32];
            if (number_ == std::trunc(number_) && std::fabs(number_) <= 9007199254740992.0) {
                std::snprintf(buf, sizeof buf, "%.0f", number_);
                out += std::strcmp(buf, "-0") == 0 ? "0" : buf;
                return;
            }
            for (int digits = 9; digits <= 17; ++digits) {
                std::snprintf(buf, sizeof buf, "%.*g", digits, number_);
                if (std::strtod(buf, nullptr) == number_) break;
            }
            out += buf;
            return;
        }
        case Kind::String: out += json_quote(text_); return;
        case Kind::Array:
        case Kind::Object: {
            const bool object = kind_ == Kind::Object;
            out += object ? '{' : '[';
            for (std::size_t i = 0; i < items_.size(); ++i) {
                if (i) out += ',';
                newline(depth + 1);
                if (object) out += json_quote(keys_[i]) + (indent < 0 ? ":" : ": ");
                items_[i].write(out, indent, depth + 1);
            }
            if (!items_.empty()) newline(depth);
            out += object ? '}' : ']';
            return;
        }
    }
}

}  // namespace sgemm
