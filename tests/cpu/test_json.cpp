#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "src/util/json.h"

using namespace sgemm;

TEST(Json, WritesObjectsInInsertionOrder) {
    Json j = Json::object();
    j.set("b", 1).set("a", "x").set("c", Json::array().push(1.5).push(true).push(Json()));
    EXPECT_EQ(j.dump(-1), R"({"b":1,"a":"x","c":[1.5,true,null]})");
    j.set("b", 2);
    EXPECT_EQ(j.dump(-1), R"({"b":2,"a":"x","c":[1.5,true,null]})");
}

TEST(Json, EscapesStringsAndNullsNonFiniteNumbers) {
    Json j = Json::array();
    j.push("a\"b\\c\nd\x01").push(std::nan("")).push(INFINITY);
    EXPECT_EQ(j.dump(-1), R"(["a\"b\\c\nd\u0001",null,null])");
}

// Numbers read back as the same double, in as few digits as that takes (at least 9 are tried
// first): 2^30 as a double is not rounded to 1.07374182e+09.
TEST(Json, NumbersReadBackExactly) {
    EXPECT_EQ(Json(1073741824.0).dump(), "1073741824");
    EXPECT_EQ(Json(17156800512.0).dump(), "17156800512");
    EXPECT_EQ(Json(0.1).dump(), "0.1");
    EXPECT_EQ(Json(1.5e-7).dump(), "1.5e-07");
    // Whole numbers as integers, for readers that parse counts as integers: never 3.32398592e+10.
    EXPECT_EQ(Json(33239859200.0).dump(), "33239859200");
    EXPECT_EQ(Json(-4096.0).dump(), "-4096");
    EXPECT_EQ(Json(-0.0).dump(), "0");
    EXPECT_EQ(Json(9007199254740992.0).dump(), "9007199254740992");
    EXPECT_EQ(Json(1e300).dump(), "1e+300") << "past 2^53 a double is not a count";
    for (double v : {1.0 / 3.0, 0.00699123456789, 6.02214076e23, -2.5e-300}) {
        const std::string text = Json(v).dump();
        EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
    }
}

TEST(Json, BytesThatAreNotUtf8BecomeReplacementCharacters) {
    // A file name in another encoding must not make the output unparseable; UTF-8 passes.
    EXPECT_EQ(json_quote("a\xff\xfe\xc3\xa9\xe2\x82"), "\"a\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(Json, PrettyPrints) {
    Json j = Json::object();
    j.set("k", Json::array().push(1));
    EXPECT_EQ(j.dump(2), "{\n  \"k\": [\n    1\n  ]\n}");
    EXPECT_EQ(Json::object().dump(2), "{}");
}

TEST(Json, MisuseIsAnError) {
    Json a = Json::array();
    EXPECT_THROW(a.set("k", 1), std::exception);
    Json o = Json::object();
    EXPECT_THROW(o.push(1), std::exception);
}
