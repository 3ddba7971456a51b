// Text made safe to print: what a config, a shapes CSV or a database row may hold reaches a
// terminal only as \xNN escapes, control characters and bytes that are not UTF-8 alike.
#include <gtest/gtest.h>

#include "src/util/text.h"

using namespace sgemm;

TEST(Printable, EscapesControlCharactersAndBytesThatAreNotUtf8) {
    EXPECT_EQ(printable("q\x1b[31mkv\n"), "q\\x1b[31mkv\\x0a");
    EXPECT_EQ(printable("\xff\xfe,64"), "\\xff\\xfe,64");
    EXPECT_EQ(printable("a\xc3"), "a\\xc3") << "a sequence cut short";
    EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf") << "an overlong form";
    EXPECT_EQ(printable("GPU \xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x9a\x80"), "GPU \xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x9a\x80")
        << "well-formed UTF-8 stays as it is";
    EXPECT_EQ(printable_lines("one\x1b\ntwo\xff"), "one\\x1b\ntwo\\xff");
    // C1 controls, well-formed UTF-8 as they are: U+009B starts a terminal's escape codes too.
    EXPECT_EQ(printable("\xc2\x9b" "31mRED \xc2\x85 \xc2\xa0"), "\\xc2\\x9b31mRED \\xc2\\x85 \xc2\xa0")
        << "U+00A0, past the C1 block, stays";
}

TEST(SingleQuoted, QuotesAValueSoItsLineBreaksCannotSplitAMessage) {
    EXPECT_EQ(single_quoted("fp\n16"), "'fp\\x0a16'");
    EXPECT_EQ(printable_lines("precision " + single_quoted("fp\n16") + " is not tuned").find('\n'), std::string::npos)
        << "a message printed line by line stays one line";
    EXPECT_EQ(single_quoted(""), "''");
    EXPECT_EQ(single_quoted("caf\xc3\xa9"), "'caf\xc3\xa9'");
}

TEST(SingleQuoted, CutsALongValueAtAWholeCharacterAndGivesItsLength) {
    const std::string exactly(kQuotedBytes, 'a');
    EXPECT_EQ(single_quoted(exactly), "'" + exactly + "'");
    EXPECT_EQ(single_quoted(std::string(5000000, 'a')), "'" + exactly + "...' (5000000 bytes)");
    // A two-byte character across the cut is left out whole.
    const std::string accents = std::string(kQuotedBytes - 1, 'a') + "\xc3\xa9\xc3\xa9";
    EXPECT_EQ(single_quoted(accents), "'" + std::string(kQuotedBytes - 1, 'a') + "...' (" +
                                          std::to_string(accents.size()) + " bytes)");
}

// Invisible format characters that reorder or hide text are escaped like control characters:
// U+202E (right-to-left override), U+2066 (an isolate), U+200B (zero-width space), U+FEFF
// (byte order mark), U+061C (Arabic letter mark). Visible neighbours stay.
TEST(Printable, EscapesInvisibleFormatCharacters) {
    EXPECT_EQ(printable("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");
    EXPECT_EQ(printable("\xe2\x81\xa6x"), "\\xe2\\x81\\xa6x");
    EXPECT_EQ(printable("\xe2\x80\x8bM"), "\\xe2\\x80\\x8bM");
    EXPECT_EQ(printable("\xef\xbb\xbfM"), "\\xef\\xbb\\xbfM");
    EXPECT_EQ(printable("\xd8\x9c"), "\\xd8\\x9c");
    EXPECT_EQ(printable("\xe2\x80\x94 \xe2\x80\xb0 \xe2\x81\xb0 \xef\xbb\xbe"),
              "\xe2\x80\x94 \xe2\x80\xb0 \xe2\x81\xb0 \xef\xbb\xbe")
        << "U+2014, U+2030, U+2070 and U+FEFE, next to the ranges, stay";
    EXPECT_TRUE(has_control_character("a\xe2\x80\xae" "b"));
    EXPECT_TRUE(has_control_character("\xef\xbb\xbf"));
    EXPECT_FALSE(has_control_character("\xe2\x80\x94"));
    // U+2028 (a line break to editors), U+00AD (soft hyphen), U+E0001 (a tag, four bytes).
    EXPECT_EQ(printable("a\xe2\x80\xa8" "b\xc2\xad" "c\xf3\xa0\x80\x81" "d"),
              "a\\xe2\\x80\\xa8" "b\\xc2\\xad" "c\\xf3\\xa0\\x80\\x81" "d");
    // The zero-width joiner and non-joiner stay (Persian names and emoji sequences need them),
    // and so do four-byte characters outside the tags (U+1F680, U+E0080).
    const std::string kept = "\xd9\x85\xe2\x80\x8c\xdb\x8c \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x9a\x80 \xf3\xa0\x82\x80";
    EXPECT_EQ(printable(kept), kept);
    EXPECT_FALSE(has_control_character(kept));
}

// A cut at a byte count never splits a UTF-8 character: it ends before one that would not fit.
TEST(Utf8Prefix, CutsBeforeACharacterThatWouldNotFit) {
    const std::string text = "ab\xc3\xa9" "c\xf0\x9f\x9a\x80";  // a b é c 🚀: 1+1+2+1+4 bytes
    EXPECT_EQ(utf8_prefix(text, 100), text);
    EXPECT_EQ(utf8_prefix(text, 3), "ab");
    EXPECT_EQ(utf8_prefix(text, 4), "ab\xc3\xa9");
    EXPECT_EQ(utf8_prefix(text, 6), "ab\xc3\xa9" "c");
    EXPECT_EQ(utf8_prefix(text, 8), "ab\xc3\xa9" "c");
    EXPECT_EQ(utf8_prefix(text, 9), text);
    EXPECT_EQ(utf8_prefix(text, 0), "");
}

TEST(Printable, AControlCharacterIsNotABadByte) {
    EXPECT_TRUE(has_control_character("a\tb"));
    EXPECT_TRUE(has_control_character("a\x7f"));
    EXPECT_FALSE(has_control_character("caf\xc3\xa9"));
    EXPECT_TRUE(has_control_character("a\xc2\x9b"));
    EXPECT_FALSE(has_control_character("a\xc2\xa0"));
    EXPECT_FALSE(has_control_character("\xff")) << "not UTF-8, but no control character";
}

TEST(OnOneLine, JoinsACompilersLogIntoOneReason) {
    const std::string log = "NVRTC failed to compile warptile (NVRTC_ERROR_COMPILATION):\n"
                            "default_program(12): error: identifier \"TM\" is undefined\r\n"
                            "      float acc[TM];\n"
                            "                ^\n"
                            "\n"
                            "1 error detected in the compilation of \"default_program\".\n";
    EXPECT_EQ(on_one_line(log),
              "NVRTC failed to compile warptile (NVRTC_ERROR_COMPILATION): | default_program(12): error: identifier "
              "\"TM\" is undefined | float acc[TM]; | ^ | 1 error detected in the compilation of \"default_program\".");
    EXPECT_EQ(on_one_line("one line"), "one line");
    EXPECT_EQ(on_one_line(" \n\t\n"), "");
}

TEST(CutWithLength, MarksACutAndGivesTheWholeLength) {
    EXPECT_EQ(cut_with_length("short", 5), "short");
    EXPECT_EQ(cut_with_length("a longer log", 8), "a longer... (12 bytes)");
    // Whole characters: the cut falls before a two-byte é that would not fit.
    EXPECT_EQ(cut_with_length("caf\xc3\xa9 au lait", 4), "caf... (13 bytes)");
}

TEST(Indented, PutsThePrefixBeforeEachLine) {
    EXPECT_EQ(indented("error: x\n  at line 3", "    "), "    error: x\n      at line 3");
    EXPECT_EQ(indented("one", "> "), "> one");
}

TEST(ChosenWord, ReadsAWordInAnyCaseWithoutTheWhiteSpaceAroundIt) {
    EXPECT_EQ(chosen_word(" FP16\t"), "fp16");
    EXPECT_EQ(chosen_word("Out-In"), "out-in");
    EXPECT_EQ(chosen_word("n t"), "n t") << "white space inside a word stays, and the word is refused";
    EXPECT_EQ(chosen_word("  "), "");
}
