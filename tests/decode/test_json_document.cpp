#include <gtest/gtest.h>

#include <string>

#include "tuner/decode/json_document.h"

using namespace sgemm;

namespace {

// The syntax error `text` raises, as "line:column: problem", or "" when it parses.
std::string syntax_error(const std::string& text) {
    try {
        parse_json(text);
    } catch (const JsonSyntaxError& e) {
        return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.what();
    }
    return "";
}

}  // namespace

TEST(JsonDocument, KeepsEachValuesKind) {
    const JsonValue v = parse_json(R"({"n": 4096, "s": "4096", "b": true, "f": false, "z": null,
                                       "x": -1.5e-3, "a": [1, {"k": []}], "o": {}})");
    ASSERT_EQ(v.kind, JsonValue::Kind::Object);
    EXPECT_EQ(v.keys.size(), 8u);
    EXPECT_EQ(v.find("n")->kind, JsonValue::Kind::Number);
    EXPECT_EQ(v.find("n")->text, "4096");
    EXPECT_EQ(v.find("s")->kind, JsonValue::Kind::String);
    EXPECT_EQ(v.find("s")->text, "4096");
    EXPECT_EQ(v.find("b")->kind, JsonValue::Kind::Bool);
    EXPECT_EQ(v.find("b")->text, "true");
    EXPECT_EQ(v.find("f")->text, "false");
    EXPECT_EQ(v.find("z")->kind, JsonValue::Kind::Null);
    EXPECT_EQ(v.find("x")->text, "-1.5e-3");
    const JsonValue& a = *v.find("a");
    ASSERT_EQ(a.kind, JsonValue::Kind::Array);
    ASSERT_EQ(a.items.size(), 2u);
    EXPECT_EQ(a.items[1].find("k")->kind, JsonValue::Kind::Array);
    EXPECT_EQ(v.find("o")->kind, JsonValue::Kind::Object);
    EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonDocument, DecodesStringEscapes) {
    const JsonValue v = parse_json(R"(["a\"b\\c\/d\n\t\r\b\f", "\u00e9\u20ac", "\ud83d\ude00", "π"])");
    ASSERT_EQ(v.items.size(), 4u);
    EXPECT_EQ(v.items[0].text, "a\"b\\c/d\n\t\r\b\f");
    EXPECT_EQ(v.items[1].text, "\xC3\xA9\xE2\x82\xAC");  // é €
    EXPECT_EQ(v.items[2].text, "\xF0\x9F\x98\x80");      // one code point from a surrogate pair
    EXPECT_EQ(v.items[3].text, "\xCF\x80");              // UTF-8 passes through
}

TEST(JsonDocument, LoneSurrogatesBecomeReplacementCharacters) {
    // The grammar allows them; UTF-8 cannot hold them. Python reads them as U+FFFD too.
    const JsonValue v = parse_json(R"(["\ud83d", "\ude00x", "\ud83d\u0041"])");
    EXPECT_EQ(v.items[0].text, "\xEF\xBF\xBD");
    EXPECT_EQ(v.items[1].text, "\xEF\xBF\xBDx");
    EXPECT_EQ(v.items[2].text, "\xEF\xBF\xBD" "A");  // the escape after a lone high half is read on its own
}

TEST(JsonDocument, RepeatedKeysAreKeptAndTheLastIsFound) {
    const JsonValue v = parse_json(R"({"a": 1, "b": {"c": 1, "c": 2}, "a": 3})");
    EXPECT_EQ(v.keys.size(), 3u);
    EXPECT_EQ(v.find("a")->text, "3");
    EXPECT_EQ(v.find("b")->find("c")->text, "2");
}

TEST(JsonDocument, SkipsAByteOrderMarkAndSurroundingSpace) {
    EXPECT_EQ(parse_json("\xEF\xBB\xBF {\"k\": 1}\r\n").find("k")->text, "1");
}

TEST(JsonDocument, MalformedTextSaysWhereAndWhat) {
    struct Case {
        const char* text;
        const char* error;  // the start of "line:column: problem"
    };
    const Case cases[] = {
        {"", "1:1: the document ends where a value should be"},
        {"{\"a\": 1", "1:8: expected ',' or '}'"},
        {"{\"a\" 1}", "1:6: expected ':'"},
        {"{a: 1}", "1:2: expected a key in double quotes"},
        {"[1, 2,]", "1:7: expected a value"},
        {"[1 2]", "1:4: expected ',' or ']'"},
        {"{} {}", "1:4: unexpected text after the end"},
        {"01", "1:2: unexpected text after the end"},
        {"1.", "1:3: expected a digit after the decimal point"},
        {"1e+", "1:4: expected a digit in the exponent"},
        {"-x", "1:2: expected a digit in a number"},
        {"+1", "1:1: expected a value"},
        {"NaN", "1:1: expected a value"},
        {"tru", "1:1: expected a value"},
        {"\"abc", "1:5: a string is not closed"},
        {"\"a\nb\"", "1:3: a control character inside a string"},
        {"\"\\x\"", "1:3: an unknown escape"},
        {"\"\\u12g4\"", "1:6: expected 4 hexadecimal digits"},
        {"\"abc\\", "1:6: a string is not closed"},
        {"\"a\xff\"", "1:3: a string holds bytes that are not UTF-8"},
        {"\"\xc0\xaf\"", "1:2: a string holds bytes that are not UTF-8"},      // an overlong '/'
        {"\"\xed\xa0\x80\"", "1:2: a string holds bytes that are not UTF-8"},  // a surrogate
        {"\"\xe2\x82\"", "1:2: a string holds bytes that are not UTF-8"},      // cut short
    };
    for (const Case& c : cases) {
        const std::string error = syntax_error(c.text);
        EXPECT_EQ(error.rfind(c.error, 0), 0u) << "for " << c.text << ": " << (error.empty() ? "accepted" : error);
    }
}

TEST(JsonDocument, DeepNestingIsRefusedNotACrash) {
    EXPECT_NO_THROW(parse_json(std::string(256, '[') + std::string(256, ']')));
    const std::string error = syntax_error(std::string(100000, '['));
    EXPECT_NE(error.find("nested more than 256 levels"), std::string::npos) << error;
}
