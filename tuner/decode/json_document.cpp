#include "tuner/decode/json_document.h"

#include <cstdint>

#include "src/util/utf8.h"

namespace sgemm {

const JsonValue* JsonValue::find(const std::string& key) const {
    for (std::size_t i = keys.size(); i-- > 0;)
        if (keys[i] == key) return &items[i];
    return nullptr;
}

JsonSyntaxError::JsonSyntaxError(int l, int c, const std::string& problem)
    : std::runtime_error(problem), line(l), column(c) {}

const char* json_kind_name(JsonValue::Kind kind) {
    switch (kind) {
        case JsonValue::Kind::Null: return "null";
        case JsonValue::Kind::Bool: return "a boolean";
        case JsonValue::Kind::Number: return "a number";
        case JsonValue::Kind::String: return "a string";
        case JsonValue::Kind::Array: return "an array";
        case JsonValue::Kind::Object: return "an object";
    }
    return "a value";
}

namespace {

constexpr int kMaxDepth = 256;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A recursive-descent reader over the whole text; pos_ is the next unread byte.
class Reader {
public:
    explicit Reader(const std::string& text) : text_(text) {
        if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
    }

    JsonValue document() {
        JsonValue v = value(0);
        skip_space();
        if (pos_ < text_.size()) fail("unexpected text after the end of the document");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& problem) const {
        int line = 1, column = 1;
        for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
            if (text_[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        throw JsonSyntaxError(line, column, problem);
    }

    bool at_end() const { return pos_ >= text_.size(); }
    char peek() const { return at_end() ? '\0' : text_[pos_]; }

    void skip_space() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
    }

    void expect(char c, const char* what) {
        skip_space();
        if (peek() != c) fail(std::string("expected ") + what);
        ++pos_;
    }

    JsonValue value(int depth) {
        skip_space();
        if (at_end()) fail("the document ends where a value should be");
        const char c = peek();
        if (c == '{' || c == '[') {
            if (depth >= kMaxDepth) fail("nested more than " + std::to_string(kMaxDepth) + " levels deep");
            return c == '{' ? object(depth + 1) : array(depth + 1);
        }
        JsonValue v;
        if (c == '"') {
            v.kind = JsonValue::Kind::String;
            v.text = string();
        } else if (c == '-' || is_digit(c)) {
            v.kind = JsonValue::Kind::Number;
            v.text = number();
        } else if (word("true")) {
            v.kind = JsonValue::Kind::Bool;
            v.text = "true";
        } else if (word("false")) {
            v.kind = JsonValue::Kind::Bool;
            v.text = "false";
        } else if (!word("null")) {
            fail("expected a value (an object, array, string, number, true, false or null)");
        }
        return v;
    }

    // Consumes `w` if the text continues with it.
    bool word(const char* w) {
        const std::string s(w);
        if (text_.compare(pos_, s.size(), s) != 0) return false;
        pos_ += s.size();
        return true;
    }

    // Reads the elements of an object or array, from its opening bracket to `close`: each by
    // `element`, with commas between them.
    template <class Element>
    void elements(char close, const char* expected, Element&& element) {
        ++pos_;  // '{' or '['
        skip_space();
        if (peek() == close) {
            ++pos_;
            return;
        }
        for (;;) {
            element();
            skip_space();
            if (peek() != ',') break;
            ++pos_;
        }
        expect(close, expected);
    }

    JsonValue object(int depth) {
        JsonValue v;
        v.kind = JsonValue::Kind::Object;
        elements('}', "',' or '}' in an object", [&] {
            skip_space();
            if (peek() != '"') fail("expected a key in double quotes");
            std::string key = string();
            expect(':', "':' after a key");
            v.items.push_back(value(depth));
            v.keys.push_back(std::move(key));
        });
        return v;
    }

    JsonValue array(int depth) {
        JsonValue v;
        v.kind = JsonValue::Kind::Array;
        elements(']', "',' or ']' in an array", [&] { v.items.push_back(value(depth)); });
        return v;
    }

    // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, returned as written.
    std::string number() {
        const std::size_t start = pos_;
        if (peek() == '-') ++pos_;
        if (peek() == '0') {
            ++pos_;
        } else if (is_digit(peek())) {
            while (is_digit(peek())) ++pos_;
        } else {
            fail("expected a digit in a number");
        }
        if (peek() == '.') {
            ++pos_;
            if (!is_digit(peek())) fail("expected a digit after the decimal point");
            while (is_digit(peek())) ++pos_;
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            if (!is_digit(peek())) fail("expected a digit in the exponent");
            while (is_digit(peek())) ++pos_;
        }
        return text_.substr(start, pos_ - start);
    }

    unsigned hex4() {
        unsigned u = 0;
        for (int i = 0; i < 4; ++i, ++pos_) {
            const char c = peek();
            u <<= 4;
            if (is_digit(c)) u |= c - '0';
            else if (c >= 'a' && c <= 'f') u |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') u |= c - 'A' + 10;
            else fail("expected 4 hexadecimal digits after \\u");
        }
        return u;
    }

    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | cp >> 6);
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | cp >> 12);
            out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | cp >> 18);
            out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
            out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    // A string literal, escapes decoded ("\u00e9" becomes UTF-8; a surrogate pair one code point).
    std::string string() {
        ++pos_;  // '"'
        std::string out;
        for (;;) {
            if (at_end()) fail("a string is not closed");
            const char c = text_[pos_];
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string (write it as an escape)");
            if (static_cast<unsigned char>(c) >= 0x80) {
                const std::size_t length = utf8_sequence_length(text_, pos_);
                if (length == 0) fail("a string holds bytes that are not UTF-8");
                out.append(text_, pos_, length);
                pos_ += length;
                continue;
            }
            if (c != '\\') {
                out += c;
                ++pos_;
                continue;
            }
            ++pos_;
            if (at_end()) fail("a string is not closed");
            const char e = peek();
            ++pos_;
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    // A surrogate pair is one code point; a lone surrogate, which the grammar
                    // allows but UTF-8 cannot hold, becomes U+FFFD, as Python reads it.
                    std::uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00) {
                        const std::size_t after_high = pos_;
                        const unsigned low = word("\\u") ? hex4() : 0;
                        if (low >= 0xDC00 && low < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        } else {
                            cp = 0xFFFD;
                            pos_ = after_high;
                        }
                    } else if (cp >= 0xDC00 && cp < 0xE000) {
                        cp = 0xFFFD;
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    --pos_;
                    fail("an unknown escape in a string");
            }
        }
    }

    const std::string& text_;
    std::size_t pos_ = 0;
};

}  // namespace

JsonValue parse_json(const std::string& text) { return Reader(text).document(); }

}  // namespace sgemm
