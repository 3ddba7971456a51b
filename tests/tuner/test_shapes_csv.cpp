// The shapes CSV: what parses, and every bad input named by file and line.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tuner/shapes_csv.h"
#include "tuner/tuner.h"

using namespace sgemm;

namespace {

ShapesFile parse(const std::string& text) {
    std::istringstream in(text);
    return parse_shapes_csv(in, "shapes.csv");
}

std::string error_of(const std::string& text) {
    try {
        parse(text);
    } catch (const ShapesCsvError& e) {
        return e.what();
    }
    return "no error";
}

// A figure of /proc/self/status in bytes ("VmHWM", the peak resident size; "VmRSS"), or -1.
long long status_bytes(const std::string& name) {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind(name + ":", 0) == 0) return std::stoll(line.substr(name.size() + 1)) * 1024;
    return -1;
}

TEST(ShapesCsv, ParsesRequiredAndOptionalColumnsInAnyOrder) {
    const ShapesFile f = parse(
        "# decode shapes\n"
        "name,K,M,N,weight,transB\n"
        "qkv,4096,8,6144,32,N\n"
        "\n"
        "  # indented comment\n"
        "lm_head,4096,1,128256,1,T\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].key.M, 8);
    EXPECT_EQ(f.rows[0].key.N, 6144);
    EXPECT_EQ(f.rows[0].key.K, 4096);
    EXPECT_EQ(f.rows[0].weight, 32);
    EXPECT_EQ(f.rows[0].name, "qkv");
    EXPECT_EQ(f.rows[0].line, 3);
    EXPECT_FALSE(f.rows[0].key.trans_b);
    EXPECT_TRUE(f.rows[1].key.trans_b);
    EXPECT_EQ(f.rows[1].line, 6);
    EXPECT_TRUE(f.warnings.empty());
}

TEST(ShapesCsv, TransposesAndPrecisionAreRead) {
    // Letters in any case: t and FP32 as well as T and fp32.
    const ShapesFile f = parse("M,N,K,transA,transB,precision\n8,4096,4096,T,N,fp32\n8,4096,4096,n,t,FP32\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_TRUE(f.rows[0].key.trans_a);
    EXPECT_FALSE(f.rows[0].key.trans_b);
    EXPECT_EQ(f.rows[0].key.precision, GemmPrecision::fp32);
    EXPECT_FALSE(f.rows[1].key.trans_a);
    EXPECT_TRUE(f.rows[1].key.trans_b);
    EXPECT_EQ(f.rows[1].key.precision, GemmPrecision::fp32);
}

TEST(ShapesCsv, DefaultsForOmittedColumns) {
    const ShapesFile f = parse("M,N,K\n1,2,3\n");
    EXPECT_EQ(f.rows[0].weight, 1.0);
    EXPECT_EQ(f.rows[0].key.precision, GemmPrecision::fp32);
    EXPECT_FALSE(f.rows[0].key.trans_a);
}

// A file's shapes are tuned on tightly packed operands: each key names their class.
TEST(ShapesCsv, EachShapeIsKeyedByTheClassOfPackedOperands) {
    const ShapesFile f = parse("M,N,K,transA,transB\n8,4096,4096,N,N\n8,4096,4093,N,N\n8,4094,4096,N,N\n"
                               "8,4096,4093,N,T\n");
    ASSERT_EQ(f.rows.size(), 4u);
    EXPECT_EQ(f.rows[0].key.alignment, 16);
    EXPECT_EQ(f.rows[1].key.alignment, 4);  // rows of A of 4093 floats
    EXPECT_EQ(f.rows[2].key.alignment, 8);  // rows of B and C of 4094 floats
    EXPECT_EQ(f.rows[3].key.alignment, 4);  // B stored N x K: rows of 4093 floats
}

// An align column keys a shape by the class of an engine's padded or offset buffers instead;
// the same shape at two classes is two shapes, and the tuner lays out operands of each.
TEST(ShapesCsv, AnAlignColumnNamesAnotherClass) {
    const ShapesFile f = parse("M,N,K,align\n4095,4097,4093,16\n4095,4097,4093,\n8,4096,4096,4\n8,4096,4096,8\n");
    ASSERT_EQ(f.rows.size(), 4u);
    EXPECT_EQ(f.rows[0].key.alignment, 16);
    EXPECT_EQ(f.rows[1].key.alignment, 4) << "empty: packed";
    EXPECT_EQ(f.rows[2].key.alignment, 4);
    EXPECT_EQ(f.rows[3].key.alignment, 8);
    EXPECT_TRUE(f.warnings.empty());
    const ProblemSpec padded = operands_for(f.rows[0].key);
    EXPECT_EQ(padded.ldb, 4100);
    EXPECT_EQ(padded.ldc, 4100);
    EXPECT_EQ(padded.offset_floats, 0);
    EXPECT_EQ(operands_for(f.rows[3].key).offset_floats, 2);
    for (const char* bad : {"2", "32", "x", "16.0"})
        EXPECT_NE(error_of(std::string("M,N,K,align\n8,64,64,") + bad + "\n")
                      .find(std::string("shapes.csv:2: align '") + bad + "' must be 16, 8 or 4"),
                  std::string::npos)
            << bad;
}

// Column names in any case, as the values: m,n,k reads as M,N,K.
TEST(ShapesCsv, ColumnNamesAreReadInAnyCase) {
    const ShapesFile f = parse("m,n,k,TRANSA,Weight\n8,64,32,t,2\n");
    ASSERT_EQ(f.rows.size(), 1u);
    EXPECT_EQ(f.rows[0].key.M, 8);
    EXPECT_EQ(f.rows[0].key.K, 32);
    EXPECT_TRUE(f.rows[0].key.trans_a);
    EXPECT_EQ(f.rows[0].weight, 2);
}

// A stream past 64 MiB is no shapes file: refused before it is read whole.
TEST(ShapesCsv, AnInputPast64MiBIsRefused) {
    std::istringstream in("M,N,K\n" + std::string((std::size_t{64} << 20) + 1, '1'));
    try {
        parse_shapes_csv(in, "big.csv");
        FAIL() << "a 64 MiB shapes file was read";
    } catch (const ShapesCsvError& e) {
        EXPECT_NE(std::string(e.what()).find("big.csv: larger than 67108864 bytes"), std::string::npos) << e.what();
    }
}

TEST(ShapesCsv, DuplicatesAreMergedWithAWarning) {
    const ShapesFile f = parse("M,N,K,weight\n8,4096,4096,32\n1,2,3,1\n8,4096,4096,2\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].weight, 34);
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_NE(f.warnings[0].find("shapes.csv:4:"), std::string::npos) << f.warnings[0];
    EXPECT_NE(f.warnings[0].find("repeats line 2"), std::string::npos) << f.warnings[0];
}

// A file of many repeats (a log of calls) names the first 20 and counts the rest, as bad rows are.
TEST(ShapesCsv, RepeatsPastTwentyAreCountedNotEachNamed) {
    std::string text = "M,N,K\n";
    for (int i = 0; i < 1000; ++i) text += "8,4096,4096\n";
    const ShapesFile f = parse(text);
    ASSERT_EQ(f.rows.size(), 1u);
    EXPECT_EQ(f.rows[0].weight, 1000);
    ASSERT_EQ(f.warnings.size(), 21u);
    EXPECT_NE(f.warnings[19].find("shapes.csv:22:"), std::string::npos) << f.warnings[19];
    EXPECT_EQ(f.warnings[20], "shapes.csv: and 979 more lines repeat a shape above; merged (weights added)");
}

// A row of empty fields is a spreadsheet's blank row: skipped as a blank line is. It was
// "M '' is not a whole number".
TEST(ShapesCsv, ARowOfEmptyFieldsIsABlankLine) {
    const ShapesFile f = parse("M,N,K,name\n8,4096,4096,o\n,,,\n , ,\n1,64,64,\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[1].line, 5);
    EXPECT_THROW(parse("M,N,K\n,,\n"), ShapesCsvError) << "no shapes after the header";
    EXPECT_EQ(parse(",,,\nM,N,K\n8,64,64\n").rows.at(0).line, 3) << "before the header too";
}

// A duplicate's name is kept beside the first's, once, as sgemm-shapes names one shape of
// several projections.
TEST(ShapesCsv, ADuplicatesNameJoinsTheFirstsOnce) {
    const ShapesFile f = parse("M,N,K,weight,name\n8,64,64,2,q\n8,64,64,3,o\n8,64,64,1,q\n8,64,64,1,\n1,64,64,1,\n1,64,64,1,v\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].name, "q/o");
    EXPECT_EQ(f.rows[0].weight, 7);
    EXPECT_EQ(f.rows[1].name, "v");
    // Names that are joins already join part by part.
    const ShapesFile joined = parse("M,N,K,name\n8,64,64,k\n8,64,64,q/k\n8,64,64,v/q\n");
    EXPECT_EQ(joined.rows[0].name, "k/q/v");
    // A part is known by its words: "k / v" holds v (it made "k / v/v").
    EXPECT_EQ(parse("M,N,K,name\n8,64,64,k / v\n8,64,64,v\n8,64,64, q \n").rows.at(0).name, "k / v/q");
}

TEST(ShapesCsv, ADuplicateIsNamedByTheKeyTheTunerTunes) {
    // 1x2x3 has odd rows: the tuner's buffers give it 4-byte alignment, not the default 16.
    const ShapesFile f = parse("M,N,K\n1,2,3\n1,2,3\n");
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_NE(f.warnings[0].find("M=1 N=2 K=3 NN fp32 align4 repeats line 2"), std::string::npos) << f.warnings[0];
}

TEST(ShapesCsv, WhiteSpaceLinesAndLoneCarriageReturnsAreLineBreaks) {
    const ShapesFile f = parse("# a comment\rM,N,K\r \t\r8,4096,4096\r\n\t\n1,2,3\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].line, 4);
    EXPECT_EQ(f.rows[1].line, 6);
}

TEST(ShapesCsv, ANameWithAControlCharacterIsRefused) {
    EXPECT_EQ(error_of("M,N,K,name\n8,4096,4096,\"q\x1b[31mkv\"\n"),
              "shapes.csv:2: the name 'q\\x1b[31mkv' holds a control or invisible character; names are printed in "
              "tables and progress lines");
    EXPECT_NE(error_of("M,N,K,name\n8,4096,4096,\"two\nlines\"\n").find("shapes.csv:2: the name 'two\\x0alines'"),
              std::string::npos);
    // U+202E, which shows the rest of a line backwards.
    EXPECT_NE(error_of("M,N,K,name\n8,4096,4096,a\xe2\x80\xae" "b\n").find("shapes.csv:2: the name 'a\\xe2\\x80\\xaeb'"),
              std::string::npos);
}

// A column's name with an invisible character in it (a second byte order mark, a zero-width
// space) is shown with it escaped, so that "unknown column" does not name a column that reads
// as a known one.
TEST(ShapesCsv, AnUnknownColumnsInvisibleCharacterIsShown) {
    EXPECT_NE(error_of("\xef\xbb\xbf\xef\xbb\xbfM,N,K\n1,64,64\n").find("unknown column '\\xef\\xbb\\xbfM'"),
              std::string::npos);
    EXPECT_NE(error_of("M,N,K,\xe2\x80\x8bweight\n1,64,64,1\n").find("unknown column '\\xe2\\x80\\x8bweight'"),
              std::string::npos);
}

// A line inside a quoted field is the field's text, even where it starts with #: it was taken
// for a comment and blanked, closing quote and all ("a quoted field is never closed"). A
// comment's own quote opens no field, nor does one inside an unquoted field.
TEST(ShapesCsv, ALineInsideAQuotedFieldIsNoComment) {
    EXPECT_NE(error_of("M,N,K,name\n64,64,64,\"x\n# y\"\n").find("shapes.csv:2: the name 'x\\x0a# y' holds a control"),
              std::string::npos)
        << error_of("M,N,K,name\n64,64,64,\"x\n# y\"\n");
    const ShapesFile f = parse("M,N,K,name\n# an \"odd quote\n8,4096,4096,\"q\"\"kv\"\n# \"\n1,2,3,o\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].name, "q\"kv");
    EXPECT_EQ(f.rows[1].line, 5);
    const ShapesFile g = parse("M,N,K,name\n1,4096,4096,lm\"head\n# a comment\n1,4096,11008,up\n");
    ASSERT_EQ(g.rows.size(), 2u);
    EXPECT_EQ(g.rows[0].name, "lm\"head");
    EXPECT_EQ(g.rows[1].line, 4);
}

TEST(ShapesCsv, BadInputsNameTheLine) {
    EXPECT_NE(error_of("M,N,K\n1,2,3\n4,x,6\n").find("shapes.csv:3: N 'x' is not a whole number"), std::string::npos)
        << error_of("M,N,K\n1,2,3\n4,x,6\n");
    EXPECT_NE(error_of("M,N,K\n0,2,3\n").find("shapes.csv:2: M must be at least 1"), std::string::npos);
    EXPECT_NE(error_of("M,N,K\n1,-2,3\n").find("shapes.csv:2: N must be at least 1"), std::string::npos);
    EXPECT_NE(error_of("M,N,K\n1,2,3.5\n").find("shapes.csv:2: K '3.5' is not a whole number"), std::string::npos);
    EXPECT_NE(error_of("M,N,K,batch\n1,2,3,4\n").find("shapes.csv:1: unknown column 'batch'"), std::string::npos);
    EXPECT_NE(error_of("M,N\n1,2\n").find("shapes.csv:1: the header has no column K"), std::string::npos);
    EXPECT_NE(error_of("M,N,K\n1,2\n").find("shapes.csv:2: expected 3 fields, found 2"), std::string::npos);
    EXPECT_EQ(error_of("M,N,K\n1,2\n").find("a quote opens"), std::string::npos) << "no quote, no hint";
    // A quoted name after a space is split at its comma: the count says why.
    EXPECT_EQ(error_of("M,N,K,name\n8,64,64, \"a,b\"\n"),
              "shapes.csv:2: expected 4 fields, found 5 (a quote opens a field only right after the comma: a quoted "
              "field after a space is split at the commas in it)");
    EXPECT_EQ(parse("M,N,K,name\n8,64,64,\"a,b\"\n").rows.at(0).name, "a,b");
    // One without a comma kept its quotes as part of the name: refused too, naming the field.
    EXPECT_EQ(error_of("M,N,K,name\n8,64,64, \"qkv\"\n"),
              "shapes.csv:2: field 4, ' \"qkv\"', has a quote after white space: a quote opens a field only as its "
              "first character, so this one is kept as text; write the field without the white space, or without the "
              "quotes");
    EXPECT_NE(error_of("M,N,K\n \"8\",64,64\n").find("field 1, ' \"8\"', has a quote after white space"), std::string::npos)
        << "the first field has no comma before it";
    // A quoted field may hold white space and quotes: its text is what its quotes hold.
    EXPECT_EQ(parse("M,N,K,name\n8,64,64,\" \"\"qkv\"\"\"\n").rows.at(0).name, "\"qkv\"");
    EXPECT_NE(error_of("M,N,K\n8,\t\"64\",64\n").find("field 2, '\\x09\"64\"', has a quote after white space"),
              std::string::npos)
        << error_of("M,N,K\n8,\t\"64\",64\n");
    EXPECT_EQ(parse("M,N,K,name\n8,64,64,q \"kv\"\n").rows.at(0).name, "q \"kv\"") << "a quote inside a field is text";
    EXPECT_NE(error_of("M,N,K,transA\n1,2,3,X\n").find("shapes.csv:2: transA must be N or T"), std::string::npos);
    EXPECT_NE(error_of("M,N,K,weight\n1,2,3,0\n").find("shapes.csv:2: weight '0' must be a positive number"),
              std::string::npos);
    EXPECT_NE(error_of("M,N,K,precision\n1,2,3,fp8\n").find("shapes.csv:2:"), std::string::npos);
    // A precision dispatch knows but the tuner cannot tune yet fails the file, not the run
    // halfway, and so does any other, with one message (it offered tf32, then refused it).
    EXPECT_EQ(error_of("M,N,K,precision\n1,2,3,fp32\n1,2,3,tf32\n"),
              "shapes.csv:3: precision 'tf32' is not tuned: only fp32 shapes are, so far");
    EXPECT_EQ(error_of("M,N,K,precision\n1,2,3,fp16\n"), "shapes.csv:2: precision 'fp16' is not tuned: only fp32 shapes are, so far");
    EXPECT_NE(error_of("M,N,K\n99999999999,2,3\n").find("is more than 2147483647, the largest size"), std::string::npos);
    // Past even 64 bits it is still a size too large, not a malformed one.
    EXPECT_NE(error_of("M,N,K\n99999999999999999999,2,3\n").find("shapes.csv:2: M 99999999999999999999 is more than 2147483647, the largest size"),
              std::string::npos);
    // A number of a million digits is cut with its length, as another long field is (the
    // message was a megabyte), whether too large or too small.
    for (const std::string sign : {"", "-"}) {
        const std::string error = error_of("M,N,K\n8,64," + sign + std::string(1000000, '9') + "\n");
        EXPECT_LT(error.size(), 400u) << error.substr(0, 400);
        EXPECT_NE(error.find("... (" + std::to_string(sign.size() + 1000000) + " bytes)"), std::string::npos)
            << error.substr(0, 400);
    }
    EXPECT_NE(error_of("M,N,K,weight\n1,2,3,inf\n").find("shapes.csv:2: weight 'inf' must be a positive number"),
              std::string::npos);
    EXPECT_NE(error_of("M,N,K,weight\n1,2,3,0x10\n").find("shapes.csv:2: weight '0x10' must be a positive number"),
              std::string::npos);
    EXPECT_EQ(parse("M,N,K,weight\n1,2,3,2.5e1\n").rows.at(0).weight, 25);
    // A positive weight below a normal double's range is positive (it was refused as not);
    // one below every double's reads as 0 and is told so.
    EXPECT_EQ(parse("M,N,K,weight\n1,2,3,1e-310\n").rows.at(0).weight, 1e-310);
    EXPECT_EQ(error_of("M,N,K,weight\n1,2,3,1e-400\n"),
              "shapes.csv:2: weight '1e-400' must be a positive number (it is below the smallest a double holds, "
              "about 4.9e-324)");
    EXPECT_EQ(error_of("M,N,K,weight\n1,2,3,-1e-400\n"), "shapes.csv:2: weight '-1e-400' must be a positive number");
    // One past every double's range is positive too, and told so (it was called not positive).
    EXPECT_EQ(error_of("M,N,K,weight\n1,2,3,1e400\n"),
              "shapes.csv:2: weight '1e400' must be a positive number (it is above the largest a double holds, "
              "about 1.8e308)");
    EXPECT_EQ(error_of("M,N,K,weight\n1,2,3,-1e400\n"), "shapes.csv:2: weight '-1e400' must be a positive number");
    EXPECT_NE(error_of("M,N,K\n+99999999999999999999,2,3\n").find("shapes.csv:2: M +99999999999999999999 is more than"),
              std::string::npos);
    EXPECT_NE(error_of("M,N,K\n1,-99999999999999999999,3\n").find("shapes.csv:2: N must be at least 1"),
              std::string::npos);
    EXPECT_NE(error_of("M,N,K,weight\n1,2,3,1e308\n1,2,3,1e308\n").find("its weights add up past the largest number"),
              std::string::npos);
    EXPECT_NE(error_of("# only a comment\n").find("no header"), std::string::npos);
    EXPECT_NE(error_of("M,N,K\n").find("no shapes"), std::string::npos);
}

TEST(ShapesCsv, ATrailingCommaIsNoField) {
    const ShapesFile f = parse("M,N,K\n8,4096,4096,\n1,2,3, ,\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[1].key.K, 3);
    EXPECT_NE(error_of("M,N,K\n8,4096,4096,5\n").find("shapes.csv:2: expected 3 fields, found 4"), std::string::npos);
    // A spreadsheet pads the header too; an empty field the header names is a value left out.
    const ShapesFile padded = parse("M,N,K,name,\n8,4096,4096,o,\n8,4096,14336,,\n");
    ASSERT_EQ(padded.rows.size(), 2u);
    EXPECT_EQ(padded.rows[0].name, "o");
    EXPECT_EQ(padded.rows[1].name, "");
    EXPECT_NE(error_of("M,N,,K\n1,2,3,4\n").find("column 3 of the header has no name"), std::string::npos);
}

TEST(ShapesCsv, EveryBadRowIsNamedAtOnce) {
    const std::string message = error_of("M,N,K,transA\n1,2,3,N\n4,x,6,N\n7,8,9,N\n0,8,9,N\n7,8,9,Q\n");
    EXPECT_EQ(message.rfind("3 bad lines in shapes.csv:", 0), 0u) << message;
    for (const char* line : {"shapes.csv:3: N 'x'", "shapes.csv:5: M must be at least 1", "shapes.csv:6: transA must be"})
        EXPECT_NE(message.find(line), std::string::npos) << line << " in " << message;
    // A file that is wholly wrong names the first 20 and counts the rest.
    std::string many = "M,N,K\n";
    for (int i = 0; i < 25; ++i) many += "x,1,1\n";
    const std::string capped = error_of(many);
    EXPECT_NE(capped.find("shapes.csv:21: M 'x'"), std::string::npos) << capped;
    EXPECT_EQ(capped.find("shapes.csv:22:"), std::string::npos) << capped;
    EXPECT_NE(capped.find("and 5 more"), std::string::npos) << capped;
}

// A line the CSV reader cannot split (text after a closing quote, too many fields) is one bad
// line among the others: it stopped the reading, and hid the bad lines after it. A quote never
// closed takes the rest of the file, so it is the last one named.
TEST(ShapesCsv, ALineTheCsvReaderCannotSplitIsOneBadLineAmongTheOthers) {
    const std::string message =
        error_of("M,N,K,name\n1,2,3,\"a\"b\n4,x,6,o\n" + std::string(2000, ',') + "\n7,8,9,\"open\n1,1,1,x\n");
    EXPECT_EQ(message.rfind("4 bad lines in shapes.csv:", 0), 0u) << message;
    for (const char* line : {"shapes.csv:2: text after the closing quote", "shapes.csv:3: N 'x'",
                             "shapes.csv:4: 2001 fields, more than the 1024", "shapes.csv:5: a quoted field is never closed"})
        EXPECT_NE(message.find(line), std::string::npos) << line << " in " << message;
    // The fault's line is passed over to its record's real end: a quoted field after it may
    // hold a line break (it was read as a quote opened on the next line, never closed).
    EXPECT_EQ(error_of("M,N,K,name\n\"8\"x,1,1,\"a\n\"\n9,x,9,n\n"),
              "2 bad lines in shapes.csv:\n  shapes.csv:2: text after the closing quote of a field\n  shapes.csv:4: N "
              "'x' is not a whole number");
    EXPECT_NE(error_of("M,N,K\n8,64,64" + std::string(1022, ',') + "\n").find("1025 fields, more than the 1024"),
              std::string::npos);
    // A header the reader cannot split gives no columns to read the rows by: it alone is named.
    EXPECT_EQ(error_of("\"M\"x,N,K\n4,x,6\n"), "shapes.csv:1: text after the closing quote of a field");
    // Padding up to the limit is still a trailing comma.
    EXPECT_EQ(parse("M,N,K\n8,64,64" + std::string(1021, ',') + "\n").rows.at(0).key.K, 64);
}

// A file of commas alone took 32 bytes of memory for each (an empty field each), 2.3 GB for a
// 62 MB line, before its error, and every bad line's message was kept, where 20 are shown:
// rows are weighed as they are read, a line's fields past the reader's limit are counted, not
// kept, and so are bad lines past the 20.
TEST(ShapesCsv, EmptyFieldsAndBadLinesTakeNoMoreMemoryThanTheirText) {
    // Writing 5 there sets the peak resident size back to the present one (Linux 4.0).
    const auto reset_peak = [] { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5" << std::flush); };
    if (!reset_peak())
        GTEST_SKIP() << "/proc/self/clear_refs cannot be written here, so the peak memory cannot be measured";
    // How much the peak resident size grows while `text` is parsed, and the error it gives.
    const auto peak_growth = [&](const std::string& text, std::string& message) {
        reset_peak();
        const long long before = status_bytes("VmRSS");
        message = error_of(text);
        return status_bytes("VmHWM") - before;
    };
    std::string message;
    const std::size_t commas = std::size_t{12} << 20;
    const std::string empty_fields = "M,N,K\n" + std::string(commas, ',') + "\n";
    // The text's copies: error_of's stream, and the read's buffer as it grows. Keeping each
    // field took 32 times the text.
    const long long grown = peak_growth(empty_fields, message);
    EXPECT_EQ(message, "shapes.csv:2: " + std::to_string(commas + 1) + " fields, more than the 1024 a line of this file "
                       "may hold");
    EXPECT_LT(grown, 4 * static_cast<long long>(empty_fields.size())) << "the peak grew " << grown << " bytes";

    const std::size_t bad_lines = std::size_t{1} << 18;
    std::string bad = "M,N,K\n";
    for (std::size_t line = 0; line < bad_lines; ++line) bad += "x\n";
    // Keeping each line's message took some 100 bytes a line, 25 MiB here.
    const long long grown_by_bad_lines = peak_growth(bad, message);
    EXPECT_EQ(message.rfind(std::to_string(bad_lines) + " bad lines in shapes.csv:\n  shapes.csv:2: expected 3 fields, "
                                                        "found 1",
                            0),
              0u)
        << message.substr(0, 300);
    EXPECT_NE(message.find("\n  and " + std::to_string(bad_lines - 20) + " more"), std::string::npos);
    EXPECT_LT(grown_by_bad_lines, 8ll << 20) << "the peak grew " << grown_by_bad_lines << " bytes for " << bad.size()
                                             << " bytes of text";
}

TEST(ShapesCsv, AFileOfBlankRowsAloneHasNoHeader) {
    for (const char* text : {"", ",,,\n", "\n,,\n# c\n , \n"})
        EXPECT_EQ(error_of(text), "shapes.csv: no header: expected a line like M,N,K") << text;
}

TEST(ShapesCsv, AByteOrderMarkBeforeTheHeaderOrACommentIsSkipped) {
    for (const char* first : {"M,N,K\n", "# decode\nM,N,K\n"}) {
        const ShapesFile f = parse(std::string("\xEF\xBB\xBF") + first + "8,4096,4096\n");
        ASSERT_EQ(f.rows.size(), 1u) << first;
        EXPECT_EQ(f.rows[0].key.M, 8);
    }
}

TEST(ShapesCsv, AFolderIsNamedAsOne) {
    try {
        load_shapes_csv("/tmp");
        FAIL() << "a folder parsed";
    } catch (const ShapesCsvError& e) {
        EXPECT_EQ(std::string(e.what()), "/tmp: is a folder, not a CSV file");
    }
}

TEST(ShapesCsv, ADeviceIsRefusedBeforeItIsRead) {
    // /dev/zero never ends: reading it would fill memory.
    try {
        load_shapes_csv("/dev/zero");
        FAIL() << "/dev/zero parsed";
    } catch (const ShapesCsvError& e) {
        EXPECT_EQ(std::string(e.what()), "/dev/zero: is not a regular file or a pipe");
    }
}

TEST(ShapesCsv, AMissingFileIsAnError) {
    EXPECT_THROW(load_shapes_csv("/nonexistent/shapes.csv"), ShapesCsvError);
    try {
        load_shapes_csv("/nonexistent/shapes.csv");
    } catch (const ShapesCsvError& e) {
        EXPECT_EQ(std::string(e.what()), "/nonexistent/shapes.csv: cannot open it (No such file or directory)");
    }
}

// Every row too large is named, in the file's order: a user who fixed the first one found
// the next at the next run.
TEST(ShapesCsv, ShapesTooLargeForDeviceMemoryAreNamed) {
    const ShapesFile f = parse("M,N,K\n65536,32768,65536\n8,4096,4096\n65536,65536,65536\n");
    EXPECT_TRUE(shapes_too_large(f, "s.csv", std::size_t(141) << 30, false).empty());
    const std::vector<std::string> whys = shapes_too_large(f, "s.csv", std::size_t(16) << 30, false);
    ASSERT_EQ(whys.size(), 2u);
    EXPECT_EQ(whys[0].rfind("s.csv:2: M=65536 N=32768 K=65536 ", 0), 0u) << whys[0];
    EXPECT_EQ(whys[1].rfind("s.csv:4: M=65536 N=65536 K=65536 ", 0), 0u) << whys[1];
    EXPECT_NE(whys[1].find("GiB"), std::string::npos) << whys[1];
    // The largest shapes the CSV takes need tens of EiB, more than a size_t counts.
    const ShapesFile largest = parse("M,N,K\n2147483640,536870904,536870904\n2147483640,536870904,1\n");
    ASSERT_GT(tuning_bytes(largest.rows[1].key, false), 0x1p64);
    for (int line : {2, 3}) {
        ShapesFile one;
        one.rows = {largest.rows[static_cast<std::size_t>(line - 2)]};
        const std::vector<std::string> why = shapes_too_large(one, "s.csv", std::size_t(141) << 30, false);
        ASSERT_EQ(why.size(), 1u);
        EXPECT_NE(why[0].find("s.csv:" + std::to_string(line)), std::string::npos) << why[0];
    }
}

// The peak is what GemmProblem holds at once: A, B, C's first values and the output, with
// the bound's absolute copies of A and B (2A + 2B + 2C floats), or their copies laid out anew
// (in class 16 one: 2A + 2B + 4C and up to 7 floats a row), or, checked against fp64, with fp64 copies
// (3A + 3B + 4C). The estimate used to be 1.25 (A + B + 2C): 65536^3 with --check-fp64 was
// said to fit 141 GiB and took 160 GiB.
TEST(ShapesCsv, TheMemoryNeededIsTheOperandsPeak) {
    const ShapeKey square = parse("M,N,K\n65536,65536,65536\n").rows.at(0).key;
    const double floats = 65536.0 * 65536.0, rows = 65536.0;
    EXPECT_DOUBLE_EQ(tuning_bytes(square, false), 1.1 * 4.0 * (8.0 * floats + 7.0 * 4.0 * rows));
    EXPECT_DOUBLE_EQ(tuning_bytes(square, true), 1.1 * 4.0 * 10.0 * floats);
    const ShapesFile f = parse("M,N,K\n65536,65536,65536\n");
    EXPECT_TRUE(shapes_too_large(f, "s.csv", std::size_t(141) << 30, false).empty()) << "141 GiB less 0.2";
    EXPECT_EQ(shapes_too_large(f, "s.csv", std::size_t(141) << 30, true).size(), 1u) << "176 GiB";
    // A tall A of one column: its three copies laid out anew (class 4, which rows of one float
    // have, none of them aligned), 1 + 7 floats a row, are the peak.
    const ShapeKey tall = parse("M,N,K\n1000000,1,1\n").rows.at(0).key;
    EXPECT_DOUBLE_EQ(tuning_bytes(tall, false), 1.1 * 4.0 * (3e6 + 1 + 3.0 * (3e6 + 1 + 7.0 * (1e6 + 1 + 2e6))));
    // The same key at class 16, which packed operands do not have: the tuner's own rows are 4
    // floats (3 of padding), so A, C's first values and the output take 4e6 floats each and B
    // 4, beside the copy laid out anew. The estimate used to count the rows tight (29.7e6
    // floats with the copy, where 36e6 are held).
    const ShapeKey padded = parse("M,N,K,transA,transB,precision,weight,name,align\n1000000,1,1,N,N,fp32,1,,16\n").rows.at(0).key;
    EXPECT_DOUBLE_EQ(tuning_bytes(padded, false), 1.1 * 4.0 * (12e6 + 4 + 3e6 + 1 + 7.0 * (1e6 + 1 + 2e6)));
}

// The check lays each row out up to 7 floats longer and copies the rows there by a CUDA 2-D
// copy, whose pitch (a row's bytes) may not pass 2^31 - 1: a shape whose rows are longer than
// 2^29 - 8 floats is refused before tuning, by name, where the copy would fail in the check
// and end the run (and, at 2^31 - 7 floats, the second layout overflowed into a negative
// leading dimension). In a file it is a bad row on any GPU, refused by the parse (a dry run
// for a newer arch took it, with a note that such a GPU "may hold more"). One row shorter is
// judged by its memory alone.
TEST(ShapesCsv, RowsTooLongForTheChecksLayoutAreRefused) {
    const std::string why = "M=1 N=1 K=536870905 NN fp32 align4 has rows of 536870905 floats; the check lays each "
                            "row out up to 7 floats longer, and CUDA copies rows of at most 2^31 - 1 bytes, so rows "
                            "of at most 536870904 floats can be tuned";
    try {
        parse("M,N,K\n1,1,536870905\n");
        FAIL() << "a row longer than the check can lay out was read";
    } catch (const ShapesCsvError& e) {
        EXPECT_EQ(std::string(e.what()), "shapes.csv:2: " + why);
    }
    EXPECT_THROW(parse("M,N,K\n1,2147483647,1\n"), ShapesCsvError);
    EXPECT_THROW(parse("M,N,K,transA\n536870905,1,1,T\n"), ShapesCsvError) << "A^T's rows are M long";
    EXPECT_TRUE(shapes_too_large(parse("M,N,K\n1,1,536870904\n"), "s.csv", std::size_t(1) << 50, false).empty());
    EXPECT_EQ(parse("M,N,K\n536870905,1,1\n").rows.size(), 1u) << "rows of A are K long";
    // Misses come from the database, not a file: named and left out.
    ShapesFile misses = parse("M,N,K\n1,1,536870904\n");
    misses.rows[0].key.K = 536870905;
    EXPECT_EQ(shapes_too_large(misses, "s.csv", std::size_t(1) << 50, false), std::vector<std::string>{"s.csv:2: " + why});
    EXPECT_EQ(drop_shapes_too_large(misses, "s.csv", std::size_t(1) << 50, false).size(), 1u);
    EXPECT_TRUE(misses.rows.empty());
}

// Misses have no line: those too large for tuning are named by key and left out, the rest kept.
TEST(ShapesCsv, MissesTooLargeAreLeftOutAndNamedWithoutALine) {
    ShapesFile misses;
    misses.rows = parse("M,N,K\n65536,65536,65536\n8,4096,4096\n").rows;
    for (ShapeRow& row : misses.rows) row.line = 0, row.name = "900 misses";
    const std::vector<std::string> dropped = drop_shapes_too_large(misses, "the misses of device d", std::size_t(64) << 30, false);
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].rfind("the misses of device d: M=65536 N=65536 K=65536 NN fp32 align16 (900 misses) needs ", 0), 0u)
        << dropped[0];
    ASSERT_EQ(misses.rows.size(), 1u);
    EXPECT_EQ(misses.rows[0].key.M, 8);
}

}  // namespace

// Two files joined (one model's rows, then another's) repeat the header, in any case: that
// line is no shape and is passed over, and the rows of both are read.
TEST(ShapesCsv, AHeaderRepeatedByJoinedFilesIsPassedOver) {
    const ShapesFile f = parse("M,N,K,name\n1,4096,4096,o\n m , n ,k,NAME\n8,4096,4096,o\n");
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].key.M, 1);
    EXPECT_EQ(f.rows[1].key.M, 8);
    EXPECT_EQ(f.rows[1].line, 4);
    // Only the whole header: a row that names a column where a size belongs is still refused.
    EXPECT_NE(error_of("M,N,K\n1,2,3\nM,N,4\n").find("shapes.csv:3: M 'M' is not a whole number"), std::string::npos);
}

// Files joined with `cat` after a spreadsheet's export each start with a byte order mark, so
// one opens the repeated header, or a comment, mid-file; only a mark inside a line is text.
TEST(ShapesCsv, JoinedFilesByteOrderMarksAreSkipped) {
    const std::string mark = "\xEF\xBB\xBF";
    const ShapesFile f = parse(mark + "M,N,K\n8,64,64\n" + mark + "M,N,K\r\n16,64,64\r\n" + mark +
                               "# from a spreadsheet\n" + mark + "32,64,64\n");
    ASSERT_EQ(f.rows.size(), 3u);
    EXPECT_EQ(f.rows[1].key.M, 16);
    EXPECT_EQ(f.rows[2].key.M, 32);
    EXPECT_EQ(f.rows[2].line, 6);
    EXPECT_NE(error_of("M,N,K\n8," + mark + "64,64\n").find("shapes.csv:2: N '\\xef\\xbb\\xbf64'"), std::string::npos)
        << error_of("M,N,K\n8," + mark + "64,64\n");
}

// A file without its header line: its first row would be read as column names ("unknown
// column '8'"); the message says what is missing instead.
TEST(ShapesCsv, AFileWithoutItsHeaderSaysSo) {
    EXPECT_NE(error_of("8,4096,4096\n32,4096,4096\n").find("shapes.csv:1: holds numbers, not column names"),
              std::string::npos)
        << error_of("8,4096,4096\n");
    // The full form's row too (as sgemm-shapes writes it), not "unknown column '1'".
    EXPECT_NE(error_of("1,6144,4096,N,N,fp32,32,qkv\n").find("shapes.csv:1: holds numbers, not column names"),
              std::string::npos)
        << error_of("1,6144,4096,N,N,fp32,32,qkv\n");
    // A header whose later column is a number is a header with an unknown column.
    EXPECT_NE(error_of("M,N,K,1\n8,64,64,2\n").find("unknown column '1'"), std::string::npos);
}

// A field of megabytes is quoted cut short, with its length, not whole in the message.
TEST(ShapesCsv, AHugeBadFieldIsQuotedCutShort) {
    const std::string message = error_of("M,N,K\n1,2," + std::string(5000000, 'a') + "\n");
    EXPECT_LT(message.size(), 400u);
    EXPECT_NE(message.find("(5000000 bytes) is not a whole number"), std::string::npos) << message;
}
