// Inputs named on a command line where "-" is standard input (--shapes -, --config -, --gpu -,
// import -).
#pragma once
#include <string>

namespace sgemm {

// Whether reading `path` reads standard input: "-", or a name of the file or pipe behind it
// (/dev/stdin, /proc/self/fd/0, or the file itself where stdin is redirected from it).
bool reads_standard_input(const std::string& path);

// Where standard input is a terminal, says on stderr "TOOL: reading WHAT from the terminal;
// end it with Ctrl-D", so that a tool waiting for typed text does not look hung.
void say_when_reading_a_terminal(const char* tool, const std::string& what);

// Whether the file at `path` begins with SQLite's 16-byte header string: a database, whatever
// its name (false for a file that cannot be read).
bool starts_as_sqlite(const std::string& path);

}  // namespace sgemm
