#include "tools/cli_input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

namespace sgemm {

bool reads_standard_input(const std::string& path) {
    if (path == "-") return true;
    struct stat named {}, input {};
    // A name that is no file (a built-in GPU's name) reads no file at all.
    if (::stat(path.c_str(), &named) != 0 || ::fstat(STDIN_FILENO, &input) != 0) return false;
    return named.st_dev == input.st_dev && named.st_ino == input.st_ino;
}

void say_when_reading_a_terminal(const char* tool, const std::string& what) {
    if (isatty(STDIN_FILENO)) std::fprintf(stderr, "%s: reading %s from the terminal; end it with Ctrl-D\n", tool, what.c_str());
}

bool starts_as_sqlite(const std::string& path) {
    static const char header[] = "SQLite format 3";  // and its terminating zero: 16 bytes
    char start[sizeof header] = {};
    std::ifstream in(path, std::ios::binary);
    return in.read(start, sizeof start) && std::memcmp(start, header, sizeof header) == 0;
}

}  // namespace sgemm
