// Export and import: the round trip, the CSV and base64 underneath, and bad import files.
#include <gtest/gtest.h>

#include <sstream>

#include "db/base64.h"
#include "db/csv.h"
#include "db/exchange.h"
#include "db/verify.h"
#include "db/version_numbers.h"
#include "tests/db/fixture.h"

using namespace sgemm;
using namespace sgemm::testing;

namespace {

std::string export_text(TuningStore& store, ExchangeFormat format = ExchangeFormat::csv) {
    std::ostringstream out;
    export_winners(store, out, format);
    return out.str();
}

MergeSummary import_text(TuningStore& store, const std::string& text) {
    std::istringstream in(text);
    return import_winners(store, read_export(in, "winners.csv"), "winners.csv");
}

// Why importing `text` into `store` is refused, or "imported".
std::string import_error_of(TuningStore& store, const std::string& text) {
    try {
        import_text(store, text);
    } catch (const ImportError& e) {
        return e.what();
    }
    return "imported";
}

std::vector<CsvRecord> records(const std::string& csv) {
    std::istringstream in(csv);
    return read_csv(in, "export");
}

// The sample's export with one field of one data row replaced.
std::string with_field(const std::string& csv, int row, const std::string& column, const std::string& value) {
    std::vector<CsvRecord> records = ::records(csv);
    const std::vector<std::string> names = exchange_columns();
    const auto at = std::find(names.begin(), names.end(), column) - names.begin();
    records.at(row).fields.at(at) = value;
    std::string out;
    for (const CsvRecord& r : records) out += csv_line(r.fields);
    return out;
}

}  // namespace

TEST(Csv, QuotesWhatNeedsItAndReadsItBackWithLineNumbers) {
    const std::vector<std::string> fields = {"plain", "a,b", "say \"hi\"", "two\nlines", ""};
    const std::string line = csv_line(fields);
    EXPECT_EQ(line, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\n");
    std::istringstream in("h1,h2\r\n\n" + line + "x,y\n");
    const std::vector<CsvRecord> records = read_csv(in, "f.csv");
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0].line, 1);
    EXPECT_EQ(records[0].fields, (std::vector<std::string>{"h1", "h2"}));
    EXPECT_EQ(records[1].line, 3) << "the blank line 2 is skipped";
    EXPECT_EQ(records[1].fields, fields);
    EXPECT_EQ(records[2].line, 5) << "the quoted line break counts";
}

// A lone carriage return ends a line inside a quoted field as between records (old Mac text),
// and a CRLF there ends one: the lines named after it are the editor's.
TEST(Csv, ALoneCarriageReturnInAQuotedFieldEndsALine) {
    std::istringstream in("h\r\"a\rb\"\r\"c\r\nd\"\rx\r");
    const std::vector<CsvRecord> records = read_csv(in, "f.csv");
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[1].line, 2);
    EXPECT_EQ(records[2].line, 4);
    EXPECT_EQ(records[3].line, 6);
    std::istringstream nul(std::string("h\r\"a\rb\"\rx\0\r", 11));
    try {
        read_csv(nul, "f.csv");
        FAIL() << "a NUL byte was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("f.csv:4: holds a NUL byte"), std::string::npos) << e.what();
    }
}

// Spreadsheet programs start a UTF-8 CSV with a byte order mark; it is not part of the
// first column's name. Only a leading one is taken off.
TEST(Csv, ALeadingByteOrderMarkIsNotPartOfTheFirstField) {
    std::istringstream in("\xEF\xBB\xBFh1,h2\n\xEF\xBB\xBFx,y\n");
    const std::vector<CsvRecord> records = read_csv(in, "f.csv");
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].fields, (std::vector<std::string>{"h1", "h2"}));
    EXPECT_EQ(records[1].fields, (std::vector<std::string>{"\xEF\xBB\xBFx", "y"}));
}

TEST(Csv, LinesOfWhiteSpaceAreBlank) {
    std::istringstream in("h1,h2\n  \n\t\nx,y\n");
    const std::vector<CsvRecord> records = read_csv(in, "f.csv");
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[1].line, 4);
}

// With comments, a record that starts with # (after white space) is skipped to the end of its
// line, whatever line break ends it; a # anywhere else is text: inside a quoted field over
// lines, after a field's quote, or without comments at all.
TEST(Csv, ACommentIsSkippedOnlyWhereARecordStarts) {
    const std::string text = "h1,h2\r\n  # one\rx,\"a\n# b\"\n# \"\ny\"#,z\n";
    const std::vector<CsvRecord> records = parse_csv(text, "f.csv", CsvComments::hash_lines);
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[1].line, 3);
    EXPECT_EQ(records[1].fields, (std::vector<std::string>{"x", "a\n# b"}));
    EXPECT_EQ(records[2].line, 6);
    EXPECT_EQ(records[2].fields, (std::vector<std::string>{"y\"#", "z"}));
    EXPECT_EQ(parse_csv(text, "f.csv").size(), 5u) << "without comments, each # line is a record";
}

// A NUL byte (UTF-16 text, a binary file) is refused at its line: messages that quote a field
// would otherwise end at it.
TEST(Csv, ANulByteIsRefusedAtItsLine) {
    std::istringstream in(std::string("M,N,K\n8,64\0,64\n", 15));
    try {
        read_csv(in, "f.csv");
        FAIL() << "a NUL byte was read as text";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("f.csv:2: holds a NUL byte", 0), 0u) << what;
        EXPECT_NE(what.find("UTF-16"), std::string::npos) << what;
    }
}

TEST(Csv, ADatabaseFileIsNamedAsOne) {
    std::istringstream in(std::string("SQLite format 3\0\x10\0\x02\x02", 21));
    EXPECT_THROW(read_csv(in, "tuning.db"), CsvIsADatabaseError);
}

TEST(Csv, AStreamLongerThanTheLimitIsRefusedWithoutReadingItAll) {
    std::istringstream in(std::string(300000, 'a'));
    try {
        read_csv_text(in, "f.csv", 100000);
        FAIL() << "read past the limit";
    } catch (const CsvTooLargeError& e) {
        EXPECT_EQ(std::string(e.what()), "f.csv: larger than 100000 bytes, more than a CSV of this project holds");
    }
    in.clear();  // a stream read to its end would have no position to give
    const std::streampos stopped = in.tellg();
    ASSERT_NE(stopped, std::streampos(-1));
    EXPECT_LE(stopped, std::streampos(100000 + (1 << 16))) << "it read on past the chunk that crossed the limit";
    std::istringstream small("h\n1\n");
    EXPECT_EQ(read_csv_text(small, "f.csv", 4), "h\n1\n");
}

TEST(Csv, AFolderADeviceOrAMissingFileIsNamedWithTheReason) {
    const auto error_of = [](const std::string& path) -> std::string {
        try {
            open_csv_file(path);
        } catch (const Error& e) {
            return e.what();
        }
        return "opened";
    };
    EXPECT_EQ(error_of("/tmp"), "/tmp: is a folder, not a CSV file");
    EXPECT_EQ(error_of("/dev/zero"), "/dev/zero: is not a regular file or a pipe");
    EXPECT_EQ(error_of("/nonexistent/x.csv"), "/nonexistent/x.csv: cannot open it (No such file or directory)");
}

TEST(Csv, AnUnclosedQuoteNamesItsLine) {
    std::istringstream in("a,b\n1,\"open\n2,3\n");
    try {
        read_csv(in, "f.csv");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "f.csv:2: a quoted field is never closed");
    }
}

// The reader hands over a broken record with its error and goes on at the next line; fields
// past the limit are counted, not kept. parse_csv throws at the first broken record.
TEST(Csv, TheRecordReaderGoesOnPastABrokenLine) {
    CsvRecordReader reader("h\n\"a\"b,c\nx,y,z,w\n\"two\nlines\"x\n,,\nlast\n", "f.csv", CsvComments::none, 3);
    std::vector<CsvRecord> records;
    for (CsvRecord record; reader.next(record);) records.push_back(record);
    ASSERT_EQ(records.size(), 6u);
    EXPECT_EQ(records[1].error, "f.csv:2: text after the closing quote of a field");
    EXPECT_EQ(records[2].error, "f.csv:3: 4 fields, more than the 3 a line of this file may hold");
    EXPECT_EQ(records[2].fields, (std::vector<std::string>{"x", "y", "z"}));
    EXPECT_EQ(records[3].line, 4);
    EXPECT_EQ(records[3].error, "f.csv:5: text after the closing quote of a field") << "the line the quote closed on";
    EXPECT_EQ(records[4].line, 6);
    EXPECT_EQ(records[4].fields, (std::vector<std::string>{"", "", ""}));
    EXPECT_TRUE(records[4].error.empty());
    EXPECT_EQ(records[5].fields, (std::vector<std::string>{"last"}));
    // The rest of a broken record is still read, quotes and all: a quoted field after the fault
    // may hold a line break, and the next record starts after it.
    CsvRecordReader resumed("\"8\"x\"y\",1,\"a\nb\"\nz\n", "f.csv", CsvComments::none, 3);
    CsvRecord record;
    ASSERT_TRUE(resumed.next(record));
    EXPECT_EQ(record.error, "f.csv:1: text after the closing quote of a field");
    ASSERT_TRUE(resumed.next(record));
    EXPECT_EQ(record.line, 3);
    EXPECT_EQ(record.fields, (std::vector<std::string>{"z"}));
    EXPECT_FALSE(resumed.next(record));
    try {
        parse_csv("h\n\"a\"b\nx\n", "f.csv");
        FAIL() << "a broken record was read";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "f.csv:2: text after the closing quote of a field");
    }
}

TEST(Base64, RoundTripsEveryLengthAndRejectsBadText) {
    std::vector<char> bytes;
    for (int n = 0; n < 10; ++n) {
        EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
        bytes.push_back(static_cast<char>(0xf0 + n * 37));
    }
    EXPECT_EQ(base64_encode({'M', 'a'}), "TWE=");
    EXPECT_THROW(base64_decode("TWE"), Error);
    EXPECT_THROW(base64_decode("TW!="), Error);
    EXPECT_THROW(base64_decode("T=E="), Error);
}

// Export, import into an empty file, export again: the same text, and the imported file
// passes verify with the same winners and binaries.
TEST(Exchange, ExportThenImportRoundTrips) {
    TempDir dir;
    TuningStore source(dir.file("a.db"));
    const std::string id = fill_sample(source);
    const std::string csv = export_text(source);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << "a header and four winners";

    TuningStore copy(dir.file("b.db"));
    const MergeSummary summary = import_text(copy, csv);
    EXPECT_EQ(summary.devices_added, 1);
    EXPECT_EQ(summary.count(WinnerOffer::Outcome::Added), 4);
    EXPECT_EQ(summary.binaries_added, 1);
    // Every field comes back as it was, but the provenance, which says where it came from.
    const std::string round_trip = export_text(copy);
    const std::vector<CsvRecord> before = records(csv), after = records(round_trip);
    const std::vector<std::string> names = exchange_columns();
    ASSERT_EQ(before.size(), after.size());
    for (std::size_t r = 0; r < before.size(); ++r)
        for (std::size_t c = 0; c < names.size(); ++c) {
            const std::string expected =
                r > 0 && names[c] == "provenance" ? before[r].fields[c] + "; imported from winners.csv" : before[r].fields[c];
            EXPECT_TRUE(after[r].fields.at(c) == expected) << "row " << r << " column " << names[c];
        }
    const std::vector<WinnerWithBinary> a = source.winners_with_binaries(id), b = copy.winners_with_binaries(id);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].winner.shape, b[i].winner.shape);
        EXPECT_EQ(a[i].winner.ms, b[i].winner.ms) << "times survive exactly";
        EXPECT_EQ(a[i].binary.has_value(), b[i].binary.has_value());
        if (a[i].binary) {
            EXPECT_EQ(a[i].binary->cubin, b[i].binary->cubin);
        }
    }
    EXPECT_TRUE(verify_store(copy).ok());

    const MergeSummary again = import_text(copy, csv);
    EXPECT_EQ(again.count(WinnerOffer::Outcome::Kept), 4) << "importing twice changes nothing";
    EXPECT_TRUE(export_text(copy) == round_trip);
}

// An import reports each row it was offered with the speedup and TFLOPS that the database
// computes for it (generated columns), kept or refused rows too: they read 0 in
// `sgemm-db import --json`, where a merge, whose rows are read back from a database, gave them.
TEST(Exchange, AnImportsRowsCarryTheFiguresTheDatabaseComputes) {
    TempDir dir;
    TuningStore source(dir.file("a.db"));
    const std::string id = fill_sample(source);
    const std::string csv = export_text(source);
    TuningStore copy(dir.file("b.db"));
    for (const MergeSummary& summary : {import_text(copy, csv), import_text(copy, csv)}) {
        ASSERT_EQ(summary.winners.size(), 4u);
        for (const WinnerOffer& offer : summary.winners) {
            const std::optional<Winner> stored = source.find_winner(id, offer.incoming.shape);
            ASSERT_TRUE(stored) << offer.incoming.where();
            EXPECT_GT(offer.incoming.speedup, 0.0) << offer.incoming.where();
            EXPECT_DOUBLE_EQ(offer.incoming.speedup, stored->speedup) << offer.incoming.where();
            EXPECT_DOUBLE_EQ(offer.incoming.tflops, stored->tflops) << offer.incoming.where();
        }
    }
}

// A device row edited by hand (its library version, so that another build reads it) keeps
// its old id, which no lookup computes: export wrote the others and left its winners out
// without a word, exit 0. They are now named as left out (sgemm-db exits 3).
TEST(Exchange, TheWinnersOfADeviceRowEditedByHandAreNamedAsLeftOut) {
    TempDir dir;
    TuningStore store(dir.file("a.db"));
    const std::string edited_id = fill_sample(store);
    const std::string other_id = store.add_device(h200(1));
    store.put_winner(winner(other_id, shape(1, 4096, 4096), 0.5, nullptr));
    store.connection().query("UPDATE devices SET library_version = '9.9.9' WHERE id = ?1").bind(1, edited_id).run();
    std::ostringstream out;
    const ExportSummary summary = export_winners(store, out, ExchangeFormat::csv);
    const std::vector<std::string>& left_out = summary.left_out;
    ASSERT_EQ(left_out.size(), 1u);
    EXPECT_EQ(summary.exported, 1) << "the other device's winner";
    EXPECT_NE(left_out[0].find("the device row " + edited_id.substr(0, 8)), std::string::npos) << left_out[0];
    EXPECT_NE(left_out[0].find("does not match its id (edited by hand?): no lookup finds its 4 winners"),
              std::string::npos)
        << left_out[0];
    EXPECT_EQ(records(out.str()).size(), 2u) << "the header and the other device's winner";
    std::ostringstream other_only;
    EXPECT_TRUE(export_winners(store, other_only, ExchangeFormat::csv, other_id).left_out.empty());
}

// An export counts the bytes of its CSV, and one past what import reads says what to do instead
// (an export of a few thousand large kernels' winners reached it, and its import was refused).
TEST(Exchange, AnExportCountsItsCsvAndOneTooLargeToImportSaysSo) {
    TempDir dir;
    TuningStore store(dir.file("t.db"));
    fill_sample(store);
    std::ostringstream out;
    ExportSummary summary = export_winners(store, out, ExchangeFormat::csv);
    EXPECT_EQ(summary.csv_bytes, out.str().size());
    EXPECT_EQ(too_large_to_import(summary), "");
    std::ostringstream json;
    EXPECT_EQ(export_winners(store, json, ExchangeFormat::json).csv_bytes, 0u) << "no CSV";
    summary.csv_bytes = kMaxCsvBytes;
    EXPECT_EQ(too_large_to_import(summary), "") << "import reads this much";
    summary.csv_bytes = kMaxCsvBytes + 1;
    EXPECT_EQ(too_large_to_import(summary),
              "this export is 1073741825 bytes, more than the 1073741824 an import reads (each row carries its cubin): "
              "export each device alone (sgemm-db export --device ID) and import each file on its own, or share the "
              "database file itself, which sgemm-db merge takes");
}

// Exports joined with cat (the header again before each file's rows, and a byte order mark
// where a spreadsheet saved one) import as one. A header unlike the first (an export of
// another build) is named as such, not read as a row; and a device in two of the files is
// refused, saying that such files import one at a time.
TEST(Exchange, ExportsJoinedWithCatImportAsOne) {
    TempDir dir;
    TuningStore source(dir.file("a.db"));
    const std::string first = fill_sample(source);
    const std::string second = source.add_device(h200(1));
    const Binary binary = naive_binary();
    source.put_winner(winner(second, shape(8, 4096, 4096), 0.4, &binary));
    std::ostringstream one, other;
    EXPECT_EQ(export_winners(source, one, ExchangeFormat::csv, first).exported, 4);
    EXPECT_EQ(export_winners(source, other, ExchangeFormat::csv, second).exported, 1);
    const std::string bom = "\xEF\xBB\xBF";

    TuningStore copy(dir.file("b.db"));
    const MergeSummary summary = import_text(copy, bom + one.str() + bom + other.str());
    EXPECT_EQ(summary.devices_added, 2);
    EXPECT_EQ(summary.count(WinnerOffer::Outcome::Added), 5);
    EXPECT_EQ(copy.winners_with_binaries(second).size(), 1u);

    const std::string header = one.str().substr(0, one.str().find('\n') + 1);
    const std::string rows_of_other = other.str().substr(header.size());
    std::vector<std::string> columns = exchange_columns();
    std::swap(columns[0], columns[1]);  // device_id second
    for (const std::string& unlike : {csv_line(columns), std::string("device_id,gpu_name\n")}) {
        const std::string refused = import_error_of(copy, one.str() + unlike + rows_of_other);
        EXPECT_NE(refused.find("winners.csv:6: a header unlike line 1's (exports of different sgemm-db builds joined? "
                               "import each file on its own)"),
                  std::string::npos)
            << refused;
    }
    const std::string twice = import_error_of(copy, one.str() + one.str());
    EXPECT_NE(twice.find("an export has one row per device and shape (exports joined that hold the same device import "
                         "one at a time)"),
              std::string::npos)
        << twice;
    EXPECT_EQ(import_error_of(copy, one.str() + one.str().substr(header.size())).find("joined"), std::string::npos)
        << "a row given twice in one file is no join";
}

// An export past what import reads is refused with the way past it, as export says it.
TEST(Exchange, AnImportTooLargeToReadSaysWhatToDoInstead) {
    std::istringstream in(std::string(200000, '\n'));
    try {
        read_export(in, "huge.csv", 100000);
        FAIL() << "read past the limit";
    } catch (const ImportError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "huge.csv: larger than 100000 bytes, more than an import reads: export each device alone (sgemm-db "
                  "export --device ID) and import each file on its own, or share the database file itself, which "
                  "sgemm-db merge takes");
    }
}

// An edited row whose fields now read as another device's (an upgrade's relabel, where both
// versions' rows of one GPU are kept) wrote that device's winners a second time, and import
// refused the whole file for the repeated rows: it is passed over, its own winners named.
TEST(Exchange, ADeviceRowEditedIntoAnothersFieldsExportsNothingTwice) {
    TempDir dir;
    TuningStore store(dir.file("a.db"));
    const std::string id = fill_sample(store);
    const std::string other_id = store.add_device(h200(1));
    store.put_winner(winner(other_id, shape(1, 4096, 4096), 0.5, nullptr));
    store.connection()
        .query("UPDATE devices SET driver_version = ?1 WHERE id = ?2")
        .bind(1, static_cast<std::int64_t>(h200().driver_version))
        .bind(2, other_id)
        .run();
    std::ostringstream out;
    const ExportSummary summary = export_winners(store, out, ExchangeFormat::csv);
    EXPECT_EQ(summary.exported, 4) << "the sample's own four winners, once";
    ASSERT_EQ(summary.left_out.size(), 1u);
    EXPECT_NE(summary.left_out[0].find("the device row " + other_id.substr(0, 8)), std::string::npos)
        << summary.left_out[0];
    TuningStore copy(dir.file("b.db"));
    EXPECT_EQ(import_text(copy, out.str()).count(WinnerOffer::Outcome::Added), 4);
    EXPECT_EQ(copy.winners(id).size(), 4u);
}

// Winners whose device or kernel row was deleted in the sqlite3 shell (which does not enforce
// foreign keys) were found by no lookup and dropped from the export without a word, exit 0.
// They are counted as left out (sgemm-db exits 3), for the device asked for too.
TEST(Exchange, WinnersLeftDanglingByHandAreCountedAsLeftOut) {
    TempDir dir;
    TuningStore store(dir.file("a.db"));
    const std::string id = fill_sample(store);
    store.connection().exec("PRAGMA foreign_keys = OFF; DELETE FROM kernels WHERE family = 'cublas'");
    std::ostringstream out;
    ExportSummary summary = export_winners(store, out, ExchangeFormat::csv);
    EXPECT_EQ(summary.exported, 3) << "the naive kernel's three";
    ASSERT_EQ(summary.left_out.size(), 1u);
    EXPECT_EQ(summary.left_out[0].rfind("1 winners whose device or kernel row is missing (deleted by hand?)", 0), 0u)
        << summary.left_out[0];
    EXPECT_EQ(export_winners(store, out, ExchangeFormat::csv, id).left_out.size(), 1u);
    EXPECT_TRUE(export_winners(store, out, ExchangeFormat::csv, "another device").left_out.empty());

    store.connection().exec("DELETE FROM devices");
    summary = export_winners(store, out, ExchangeFormat::csv);
    EXPECT_EQ(summary.exported, 0);
    ASSERT_EQ(summary.left_out.size(), 1u);
    EXPECT_EQ(summary.left_out[0].rfind("4 winners whose device or kernel row", 0), 0u) << summary.left_out[0];
}

// A time edited or damaged in the file, which an import refuses, is left out of the export and
// named: exported, it exited 0, and the machine it went to refused it.
TEST(Exchange, AWinnerWhoseTimeNoImportTakesIsNamedAsLeftOut) {
    TempDir dir;
    TuningStore store(dir.file("a.db"));
    fill_sample(store);
    store.connection().exec("UPDATE winners SET ms = 5e-324 WHERE m = 1");
    std::ostringstream out;
    const std::vector<std::string> left_out = export_winners(store, out, ExchangeFormat::csv).left_out;
    ASSERT_EQ(left_out.size(), 1u);
    EXPECT_NE(left_out[0].find("M=1 N=4096 K=4096"), std::string::npos) << left_out[0];
    EXPECT_NE(left_out[0].find("its time is under 0.1 us, shorter than any launch"), std::string::npos) << left_out[0];
    EXPECT_EQ(records(out.str()).size(), 4u) << "the header and the three other winners";
    TuningStore other(dir.file("b.db"));
    const MergeSummary summary = import_text(other, out.str());
    EXPECT_EQ(summary.count(WinnerOffer::Outcome::Added), 3);
    EXPECT_EQ(summary.count(WinnerOffer::Outcome::Refused), 0);
}

// A winner whose binary is stored for another kernel's sources (an edited file): verify fails
// it, and export leaves it out and says why, where it used to write it with the binary filed
// as its own.
TEST(Exchange, AWinnerWhoseBinaryIsOfOtherSourcesIsNamedAsLeftOut) {
    TempDir dir;
    TuningStore store(dir.file("a.db"));
    const std::string id = fill_sample(store);
    Winner edited = *store.find_winner(id, shape(8, 4096, 4096));
    edited.kernel.template_hash = "another build's";
    store.put_winner(edited);
    std::ostringstream out;
    const ExportSummary summary = export_winners(store, out, ExchangeFormat::csv);
    const std::vector<std::string>& left_out = summary.left_out;
    ASSERT_EQ(left_out.size(), 1u);
    EXPECT_EQ(summary.exported, 3);
    EXPECT_NE(left_out[0].find("M=8 N=4096 K=4096"), std::string::npos) << left_out[0];
    EXPECT_NE(left_out[0].find("is of another kernel family or its sources"), std::string::npos) << left_out[0];
    EXPECT_EQ(records(out.str()).size(), 4u) << "the header and the three other winners";
    const VerifyReport r = verify_store(store);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_NE(r.problems[0].find("M=8 N=4096 K=4096"), std::string::npos) << r.problems[0];
}

TEST(Exchange, JsonExportHasOneObjectPerWinnerWithTypedValues) {
    TempDir dir;
    TuningStore store(dir.file("a.db"));
    fill_sample(store);
    const std::string json = export_text(store, ExchangeFormat::json);
    EXPECT_EQ(json.front(), '[');
    std::size_t objects = 0;
    for (std::size_t at = json.find("\"device_id\""); at != std::string::npos; at = json.find("\"device_id\"", at + 1))
        ++objects;
    EXPECT_EQ(objects, 4u);
    EXPECT_NE(json.find("\"m\": 4096,"), std::string::npos) << "numbers are numbers";
    EXPECT_NE(json.find("\"cubin_base64\": null"), std::string::npos) << "the cuBLAS winner has no binary";
    EXPECT_NE(json.find("\"family\": \"naive\""), std::string::npos);
}

// Every bad line is named, and nothing of the file is applied.
TEST(Exchange, AnImportWithBadRowsNamesEachLineAndAppliesNothing) {
    TempDir dir;
    TuningStore source(dir.file("a.db"));
    fill_sample(source);
    std::string csv = export_text(source);
    csv = with_field(csv, 1, "m", "eight");
    csv = with_field(csv, 3, "alignment", "12");
    csv = with_field(csv, 4, "driver_version", "12000");  // the fingerprint no longer matches its id
    TuningStore target(dir.file("b.db"));
    const std::string message = import_error_of(target, csv);
    EXPECT_NE(message.find("3 bad lines, nothing imported"), std::string::npos) << message;
    EXPECT_NE(message.find("winners.csv:2: column m: 'eight' is not an integer"), std::string::npos) << message;
    EXPECT_NE(message.find("winners.csv:4: column alignment: '12' is not 4, 8 or 16"), std::string::npos) << message;
    EXPECT_NE(message.find("winners.csv:5: device_id"), std::string::npos) << message;
    EXPECT_TRUE(target.devices().empty());
    EXPECT_TRUE(target.winners().empty());
}

// A line the CSV reader cannot split (text after a closing quote, more fields than any export
// has) is one bad line among the others: it stopped the reading, and hid the bad lines after
// it. A file of bad lines alone names the first 20 and counts the rest.
TEST(Exchange, ALineTheCsvReaderCannotSplitIsOneBadLineAmongTheOthers) {
    TempDir dir;
    TuningStore source(dir.file("a.db"));
    fill_sample(source);
    std::string csv = export_text(source);
    std::string many = csv_line(records(csv).at(0).fields);  // the header, then bad lines alone
    csv = with_field(csv, 3, "alignment", "12");
    csv += "\"x\"y,1\n" + std::string(3000, ',') + "\n";
    TuningStore target(dir.file("b.db"));
    const std::string message = import_error_of(target, csv);
    EXPECT_NE(message.find("3 bad lines, nothing imported"), std::string::npos) << message;
    EXPECT_NE(message.find("winners.csv:4: column alignment: '12' is not 4, 8 or 16"), std::string::npos) << message;
    EXPECT_NE(message.find("winners.csv:6: text after the closing quote of a field"), std::string::npos) << message;
    EXPECT_NE(message.find("winners.csv:7: 3001 fields, more than the 1024"), std::string::npos) << message;
    for (int i = 0; i < 25; ++i) many += "\"x\"y\n";
    const std::string capped = import_error_of(target, many);
    EXPECT_NE(capped.find("25 bad lines, nothing imported"), std::string::npos) << capped;
    EXPECT_NE(capped.find("winners.csv:21: text after"), std::string::npos) << capped;
    EXPECT_EQ(capped.find("winners.csv:22:"), std::string::npos) << capped;
    EXPECT_NE(capped.find("\n  and 5 more"), std::string::npos) << capped;
    EXPECT_TRUE(target.winners().empty());
}

// A file with two rows for one device and shape (edited or pasted together by hand) is
// refused whole, naming both lines: which row stayed would hang on their order.
TEST(Exchange, TwoRowsForOneDeviceAndShapeAreRefused) {
    TempDir dir;
    TuningStore source(dir.file("a.db"));
    fill_sample(source);
    const std::string csv = export_text(source);
    // The first data row again at the end, faster.
    const std::string faster_first_row = csv_line(records(with_field(csv, 1, "ms", "0.001")).at(1).fields);
    TuningStore target(dir.file("b.db"));
    try {
        import_text(target, csv + faster_first_row);
        FAIL() << "imported two rows of one device and shape";
    } catch (const ImportError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("1 bad line, nothing imported"), std::string::npos) << message;
        EXPECT_NE(message.find(": a second row for device "), std::string::npos) << message;
        EXPECT_NE(message.find("(the first is line 2)"), std::string::npos) << message;
    }
    EXPECT_TRUE(target.winners().empty());
    EXPECT_EQ(import_text(target, csv).count(WinnerOffer::Outcome::Added), 4) << "the export alone goes in";
}

namespace {

// One bad value of an import: its data row (1 is the line after the header), column, text,
// and what the message says of it.
struct BadValue {
    int row;
    const char* column;
    const char* value;
    const char* says;
};

// Imports `csv` with each of `bad` written in, expecting it refused whole, every bad line
// named as "winners.csv:LINE: column COLUMN: 'VALUE' SAYS".
void expect_each_bad_value_named(std::string csv, const std::vector<BadValue>& bad, TuningStore& target) {
    for (const BadValue& b : bad) csv = with_field(csv, b.row, b.column, b.value);
    try {
        import_text(target, csv);
        FAIL() << "imported a file with bad values";
    } catch (const ImportError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(std::to_string(bad.size()) + " bad lines, nothing imported"), std::string::npos) << message;
        for (const BadValue& b : bad) {
            const std::string line = "winners.csv:" + std::to_string(b.row + 1) + ": column " + b.column + ": '" +
                                     b.value + "' " + b.says;
            EXPECT_NE(message.find(line), std::string::npos) << line << "\n" << message;
        }
    }
    EXPECT_TRUE(target.winners().empty());
}

// The sample database's export, and an empty database to import it into.
class SampleExport : public ::testing::Test {
protected:
    SampleExport() {
        fill_sample(source);
        csv = export_text(source);
    }

    TempDir dir;
    TuningStore source{dir.file("a.db")};
    TuningStore target{dir.file("b.db")};
    std::string csv;
};

}  // namespace

// A time of 0 or below would beat every real winner in a merge; a negative tolerance means
// nothing. A time too small for a normal double is still a number, but no measured time:
// the merge rule refuses it, as one under 0.1 us or faster than the device's SMs could
// compute, which would win every later merge and import, and one over a second at under 1
// GFLOPS.
TEST_F(SampleExport, TimesMustBeAboveZeroAndTolerancesNotNegative) {
    expect_each_bad_value_named(csv,
                                {{1, "ms", "0", "must be above 0"},
                                 {2, "ms", "-0.5", "must be above 0"},
                                 {3, "tolerance", "-1e-6", "must be at least 0"},
                                 {4, "cublas_ms", "0", "must be above 0"}},
                                target);
    // Out of range is said as such, not taken for a typo.
    expect_each_bad_value_named(csv,
                                {{1, "ms", "1e999", "is not a finite number"},
                                 {2, "ms", "12ms", "is not a number"},
                                 {3, "ms", "nan", "is not a number"}},
                                target);
    const MergeSummary tiny = import_text(target, with_field(csv, 1, "ms", "1e-320"));
    EXPECT_EQ(tiny.count(WinnerOffer::Outcome::Added), 3);
    ASSERT_EQ(tiny.count(WinnerOffer::Outcome::Refused), 1);
    EXPECT_EQ(tiny.winners[0].reason, "its time is under 0.1 us, shorter than any launch (winners.csv:2)");
    // The H200's 132 SMs could compute 118 TFLOPS in fp32 at 3.5 GHz: row 1 (1 x 4096 x 4096)
    // at 0.0003 ms runs at 112 TFLOPS, row 3 (32 x 4096 x 4096) at 0.01 ms at 107, and at
    // 0.009 ms at 119 (such a time at 10 times the H200's peak was taken).
    const MergeSummary fast = import_text(target, with_field(with_field(csv, 1, "ms", "0.0003"), 3, "cublas_ms", "0.01"));
    EXPECT_EQ(fast.count(WinnerOffer::Outcome::Refused), 0);
    const MergeSummary faster = import_text(target, with_field(csv, 3, "cublas_ms", "0.009"));
    ASSERT_EQ(faster.count(WinnerOffer::Outcome::Refused), 1);
    EXPECT_EQ(faster.winners[2].reason, "its cuBLAS time would be 119 TFLOPS, more than 132 SMs could compute (118 "
                                        "TFLOPS by FFMA at 3.5 GHz) (winners.csv:4)");
    // 1,000 ms: row 3 (32 x 4096 x 4096) would run at 1.07 GFLOPS; at 1,100 ms at 0.98, and
    // at 1e308 ms at nothing worth a number.
    const MergeSummary slow = import_text(target, with_field(csv, 3, "cublas_ms", "1000"));
    EXPECT_EQ(slow.count(WinnerOffer::Outcome::Refused), 0);
    for (const char* ms : {"1100", "1e308"}) {
        const MergeSummary slower = import_text(target, with_field(csv, 3, "cublas_ms", ms));
        ASSERT_EQ(slower.count(WinnerOffer::Outcome::Refused), 1) << ms;
        EXPECT_EQ(slower.winners[2].reason,
                  "its cuBLAS time is over a second at under 1 GFLOPS, slower than any GPU computes (winners.csv:4)");
    }
}

// White space around a number, as around the transposes and the precision, is no part of
// it: a file edited by hand imports as the same winners.
TEST_F(SampleExport, WhiteSpaceAroundNumbersAndWordsIsNoPartOfThem) {
    std::string padded = csv;
    const char* trimmed_columns[] = {"cc_major", "cc_minor", "sm_count", "memory_bytes", "driver_version",
                                     "runtime_version", "m", "n", "k", "trans", "precision", "alignment", "ms",
                                     "cublas_ms", "tolerance", "arch", "registers", "shared_bytes", "stack_bytes",
                                     "spill_store_bytes", "spill_load_bytes", "compile_ms"};
    const std::vector<std::string> names = exchange_columns();
    const std::vector<CsvRecord> rows = records(csv);
    int padded_fields = 0;
    for (std::size_t r = 1; r < rows.size(); ++r)
        for (const char* column : trimmed_columns) {
            const std::string& field = rows[r].fields.at(std::find(names.begin(), names.end(), column) - names.begin());
            if (field.empty()) continue;  // a cuBLAS winner's binary columns
            padded = with_field(padded, static_cast<int>(r), column, " " + field + "\t ");
            ++padded_fields;
        }
    EXPECT_EQ(padded_fields, 4 * 15 + 3 * 7) << "15 columns of every row, and 7 of the binary of the 3 kernel rows";
    // The cuBLAS winner's binary columns are empty; blank ones are empty too.
    const auto cublas_row = std::find_if(rows.begin(), rows.end(), [&](const CsvRecord& r) {
        return r.fields.at(std::find(names.begin(), names.end(), "description") - names.begin()) == "cuBLAS";
    });
    ASSERT_NE(cublas_row, rows.end());
    for (const char* column : {"arch", "lowered_name", "cubin_base64", "cubin_checksum"})
        padded = with_field(padded, static_cast<int>(cublas_row - rows.begin()), column, " \t");
    ASSERT_EQ(import_text(target, padded).count(WinnerOffer::Outcome::Added), 4);
    TuningStore plain(dir.file("c.db"));
    import_text(plain, csv);
    EXPECT_TRUE(export_text(target) == export_text(plain)) << export_text(target);
}

// A kernel winner's binary needs every column: a blank count would read as 0, figures the
// binary does not have (the cost model ranks by them). A checksum may be left out.
TEST_F(SampleExport, ABlankColumnOfAKernelsBinaryIsABadLine) {
    const std::vector<std::string> names = exchange_columns();
    const std::vector<CsvRecord> rows = records(csv);
    const auto column = [&](const char* name) { return std::find(names.begin(), names.end(), name) - names.begin(); };
    const auto kernel_row = std::find_if(rows.begin() + 1, rows.end(), [&](const CsvRecord& r) {
        return !r.fields.at(column("cubin_base64")).empty();
    });
    ASSERT_NE(kernel_row, rows.end());
    const int row = static_cast<int>(kernel_row - rows.begin());
    for (const char* blank : {"shared_bytes", "registers", "lowered_name", "compile_ms"}) {
        try {
            import_text(target, with_field(csv, row, blank, " "));
            FAIL() << "imported a binary with a blank " << blank;
        } catch (const ImportError& e) {
            const std::string says = "winners.csv:" + std::to_string(row + 1) + ": column " + blank + ": blank, in a row with a binary";
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
        EXPECT_TRUE(target.winners().empty());
    }
}

// Counts are not negative, a device has SMs and memory, and a time of tuning reads as the
// database writes it (or is empty: now).
TEST_F(SampleExport, CountsSizesAndTimesOfTuningAreChecked) {
    expect_each_bad_value_named(csv,
                                {{1, "tuned_at", "2026-02-29T12:00:00Z", "is not a time as the database writes it"},
                                 {2, "memory_bytes", "-5", "is not positive"},
                                 {3, "sm_count", "0", "is not positive"},
                                 {4, "registers", "-3", "must be 0 or more"}},
                                target);
    std::string times = with_field(csv, 1, "tuned_at", "");
    times = with_field(times, 2, "tuned_at", "2026-11-30T12:34:56Z");
    times = with_field(times, 3, "tuned_at", "2028-02-29T00:00:00.5Z");  // a leap day
    const MergeSummary fine = import_text(target, times);
    EXPECT_EQ(fine.count(WinnerOffer::Outcome::Added), 4);
}

// A library version is one as builds write it: other text made a device row that no dispatch
// reads, and that prune --stale removed at once ("garbage", "0.3") or kept for ever as a newer
// build's ("00.3.0", "0.3.0.0").
TEST_F(SampleExport, ALibraryVersionThatIsNoVersionIsRefused) {
    expect_each_bad_value_named(csv,
                                {{1, "library_version", "garbage", "is not a version as builds write it"},
                                 {2, "library_version", "", "is not a version as builds write it"},
                                 {3, "library_version", "1234567890.0.0", "is not a version as builds write it"},
                                 {4, "library_version", "0..3", "is not a version as builds write it"}},
                                target);
    expect_each_bad_value_named(csv,
                                {{1, "library_version", "0.3", "is not a version as builds write it"},
                                 {2, "library_version", "00.3.0", "is not a version as builds write it"},
                                 {3, "library_version", "0.3.0.0", "is not a version as builds write it"},
                                 {4, "library_version", "0.3.0-", "is not a version as builds write it"}},
                                target);
}

TEST(VersionNumbers, ABuildsVersionIsThreeNumbersAndALabel) {
    for (const char* version : {"0.3.0", "10.20.30", "0.4.0-dev", "1.0.0+cuda13"})
        EXPECT_TRUE(is_build_version(version)) << version;
    for (const char* text : {"0.3", "00.3.0", "0.3.0.0", "0.3.0-", "v0.3.0", "0.3.0 ", "", "-dev"})
        EXPECT_FALSE(is_build_version(text)) << text;
}

TEST_F(SampleExport, AnImportWithABadHeaderOrABrokenCubinIsRefused) {
    EXPECT_THROW(import_text(target, ""), ImportError);
    // A header that lacks columns is one bad line that lists them all.
    try {
        import_text(target, "m,n,k,colour\n1,2,3,red\n");
        FAIL() << "imported a file without export's columns";
    } catch (const ImportError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("1 bad line, nothing imported"), std::string::npos) << message;
        EXPECT_NE(message.find("winners.csv:1: the header has unknown columns 'colour' and lacks columns 'device_id', "),
                  std::string::npos)
            << message;
    }
    // Every column and one more: a later build's export, named as possibly such.
    try {
        std::string later;
        for (const CsvRecord& r : records(csv)) {
            std::vector<std::string> fields = r.fields;
            fields.push_back(r.line == 1 ? "later_column" : "x");
            later += csv_line(fields);
        }
        import_text(target, later);
        FAIL() << "imported a file with a column it does not know";
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("winners.csv:1: the header has unknown columns 'later_column' (an export of "
                                             "a later sgemm-db? this one imports the columns it writes"),
                  std::string::npos)
            << e.what();
    }
    // A column named twice: which of its values would count?
    try {
        const std::string header = csv.substr(0, csv.find('\n'));
        import_text(target, header + ",ms\n" + csv.substr(csv.find('\n') + 1));
        FAIL() << "imported a file whose header names ms twice";
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("winners.csv:1: the header names columns 'ms' more than once"),
                  std::string::npos)
            << e.what();
    }
    // Row 1 is the first naive winner: a cubin that is not an ELF, with no checksum (as from a
    // database before schema version 4).
    try {
        import_text(target, with_field(with_field(csv, 1, "cubin_base64", base64_encode({'n', 'o', 'p', 'e'})), 1,
                                       "cubin_checksum", ""));
        FAIL();
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("winners.csv:2: the binary: its cubin is not an ELF"), std::string::npos)
            << e.what();
    }
    // A kernel name the cubin does not define (edited, or from another binary): the checksum
    // covers the cubin alone, so the symbol table tells.
    try {
        import_text(target, with_field(csv, 1, "lowered_name", "foo"));
        FAIL() << "imported a binary whose cubin defines no kernel of its name";
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("winners.csv:2: the binary: its cubin defines no kernel named 'foo'"),
                  std::string::npos)
            << e.what();
    }
    // A cubin changed in transit, its ELF whole: its checksum tells.
    std::vector<char> changed = naive_binary().cubin;
    changed[changed.size() / 2] ^= 0x5a;
    try {
        import_text(target, with_field(csv, 1, "cubin_base64", base64_encode(changed)));
        FAIL();
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("winners.csv:2: the binary: its cubin does not match the checksum"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(target.winners().empty());
}

// An export from before cubin checksums lacks the column: it imports, its binaries without
// checksums, as in the database it came from (they get the ELF check alone).
TEST_F(SampleExport, AnExportWithoutCubinChecksumsImports) {
    ASSERT_EQ(exchange_columns().back(), "cubin_checksum");
    std::string without;  // every line less its last field
    for (std::size_t start = 0, end; start < csv.size(); start = end + 1) {
        end = csv.find('\n', start);
        const std::string line = csv.substr(start, end - start);
        without += line.substr(0, line.rfind(',')) + "\n";
    }
    const MergeSummary s = import_text(target, without);
    EXPECT_EQ(s.count(WinnerOffer::Outcome::Added), 4);
    EXPECT_EQ(target.find_binary(naive_binary().cache_key)->cubin_checksum, "");
}

// What narrowed a winner's search travels with it, so that the importing database's next
// full tune replaces it too. An export from before the column was added imports its winners
// as chosen by full searches.
TEST_F(SampleExport, WhatNarrowedAWinnersSearchTravelsWithIt) {
    Winner narrowed = source.winners().front();
    narrowed.narrowed_by = "--families decode";
    source.put_winner(narrowed);
    const std::string with = export_text(source);
    import_text(target, with);
    ASSERT_TRUE(target.find_winner(narrowed.device_id, narrowed.shape));
    EXPECT_EQ(target.find_winner(narrowed.device_id, narrowed.shape)->narrowed_by, "--families decode");

    const std::vector<std::string> names = exchange_columns();
    const std::size_t column = std::find(names.begin(), names.end(), "narrowed_by") - names.begin();
    ASSERT_LT(column, names.size());
    std::string without;  // every line less that field
    for (const CsvRecord& r : records(with)) {
        std::vector<std::string> fields = r.fields;
        fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(column));
        without += csv_line(fields);
    }
    TuningStore older{dir.file("c.db")};
    EXPECT_EQ(import_text(older, without).count(WinnerOffer::Outcome::Added), 4);
    ASSERT_TRUE(older.find_winner(narrowed.device_id, narrowed.shape));
    EXPECT_EQ(older.find_winner(narrowed.device_id, narrowed.shape)->narrowed_by, "");
}

// A cuBLAS winner names no binary: a binary_key there would point at a binary the file
// does not hold, which the database refuses (the whole import used to end on a foreign-key
// error, as if the database were at fault).
TEST_F(SampleExport, ACublasWinnerWithABinaryKeyIsABadLine) {
    const std::vector<CsvRecord> rows = records(csv);
    const std::vector<std::string> names = exchange_columns();
    const auto family = std::find(names.begin(), names.end(), "family") - names.begin();
    int cublas_row = 0;
    for (std::size_t r = 1; r < rows.size(); ++r)
        if (rows[r].fields.at(family) == "cublas") cublas_row = static_cast<int>(r);
    ASSERT_GT(cublas_row, 0) << "the sample has a cuBLAS winner";
    try {
        import_text(target, with_field(csv, cublas_row, "binary_key", "deadbeef"));
        FAIL() << "imported a cuBLAS winner with a binary_key";
    } catch (const ImportError& e) {
        const std::string line = "winners.csv:" + std::to_string(cublas_row + 1) + ": a cuBLAS winner with a binary_key";
        EXPECT_NE(std::string(e.what()).find(line), std::string::npos) << e.what();
    }
    EXPECT_TRUE(target.winners().empty());
}

// A file whose every winner is refused writes nothing, not even its devices, which would
// stay as rows without a winner; one winner taken brings its device.
TEST_F(SampleExport, AFileWhoseEveryWinnerIsRefusedWritesNothing) {
    std::istringstream in(csv);
    const std::vector<ExportRow> rows = read_export(in, "winners.csv");
    const KernelProblem refuse_all = [](const Winner&, const DeviceFingerprint&) { return "refused by the test"; };
    const MergeSummary none = import_winners(target, rows, "winners.csv", refuse_all);
    EXPECT_EQ(none.count(WinnerOffer::Outcome::Refused), 4);
    EXPECT_EQ(none.devices_added, 0);
    EXPECT_EQ(none.binaries_added, 0);
    EXPECT_TRUE(target.devices().empty());
    EXPECT_TRUE(target.winners().empty());

    const KernelProblem refuse_kernels = [](const Winner& w, const DeviceFingerprint&) {
        return w.kernel.is_cublas() ? "" : "refused by the test";
    };
    const MergeSummary one = import_winners(target, rows, "winners.csv", refuse_kernels);
    EXPECT_EQ(one.count(WinnerOffer::Outcome::Added), 1);
    EXPECT_EQ(one.devices_added, 1);
    EXPECT_EQ(target.devices().size(), 1u);
    EXPECT_EQ(target.winners().size(), 1u);
}
