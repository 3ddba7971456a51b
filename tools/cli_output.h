// Output paths named on a command line, checked before the work that fills them: a tune or
// a benchmark can run for minutes, and a typo in --json must not surface only at its end.
#pragma once
#include <string>

namespace sgemm {

// Throws boost::program_options::error naming `option` unless `path` can be written: an
// existing file this process may write (a FIFO or device is taken as it is), or a new file
// in a folder that exists and takes new files. Nothing is opened or created.
void check_output_file(const std::string& path, const char* option);

// Throws boost::program_options::error naming `option` unless `path` is an existing folder
// this process may create files in.
void check_output_folder(const std::string& path, const char* option);

}  // namespace sgemm
