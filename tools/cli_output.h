// Output paths named on a command line, checked before the work that fills them: a tune or
// a benchmark can run for minutes, and a typo in --json must not surface only at its end.
#pragma once
#include <string>

namespace sgemm {

// Throws boost::program_options::error naming `option` unless `path` can be written: not a
// folder, in a folder that exists, and openable for writing. An existing file is left as it
// was (opened to append, nothing written); a new one is not left behind.
void check_output_file(const std::string& path, const char* option);

// Throws boost::program_options::error naming `option` unless `path` is an existing folder.
void check_output_folder(const std::string& path, const char* option);

}  // namespace sgemm
