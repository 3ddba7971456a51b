#include "db/csv.h"

#include "src/util/error.h"

namespace sgemm {

std::string csv_line(const std::vector<std::string>& fields) {
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ',';
        const std::string& f = fields[i];
        if (f.find_first_of(",\"\r\n") == std::string::npos) {
            out += f;
            continue;
        }
        out += '"';
        for (char c : f) out += c == '"' ? std::string("\"\"") : std::string(1, c);
        out += '"';
    }
    return out + "\n";
}

void strip_byte_order_mark(std::string& text) {
    static const std::string mark = "\xEF\xBB\xBF";
    if (text.compare(0, mark.size(), mark) == 0) text.erase(0, mark.size());
}

std::vector<CsvRecord> read_csv(std::istream& in, const std::string& source) {
    std::vector<CsvRecord> records;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    strip_byte_order_mark(text);
    int line = 1;
    std::size_t i = 0;
    const auto fail = [&](int at, const std::string& what) {
        throw Error(source + ":" + std::to_string(at) + ": " + what);
    };
    while (i < text.size()) {
        CsvRecord record{line, {}};
        std::string field;
        bool end_of_record = false;
        while (!end_of_record) {
            if (i < text.size() && text[i] == '"') {  // a quoted field, line breaks allowed
                const int opened = line;
                ++i;
                while (true) {
                    if (i >= text.size()) fail(opened, "a quoted field is never closed");
                    if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                        field += '"';
                        i += 2;
                    } else if (text[i] == '"') {
                        ++i;
                        break;
                    } else {
                        if (text[i] == '\n') ++line;
                        field += text[i++];
                    }
                }
                if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
                    fail(line, "text after the closing quote of a field");
            } else {
                while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
            }
            record.fields.push_back(std::move(field));
            field.clear();
            if (i < text.size() && text[i] == ',') {
                ++i;
                continue;
            }
            if (i < text.size() && text[i] == '\r') ++i;
            if (i < text.size() && text[i] == '\n') ++i;
            ++line;
            end_of_record = true;
        }
        const bool blank = record.fields.size() == 1 && record.fields[0].empty();
        if (!blank) records.push_back(std::move(record));
    }
    return records;
}

}  // namespace sgemm
