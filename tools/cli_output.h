// The tools' output: paths named on a command line, checked before the work that fills
// them (a tune or a benchmark can run for minutes, and a typo in --json must not surface only
// at its end), and written so that a failure is reported and loses nothing.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>

namespace sgemm {

// Throws boost::program_options::error naming `option` unless `path` can be written: an
// existing file this process may write (a FIFO or device is taken as it is), or a new file
// in a folder that exists and takes new files, under a name no longer than that folder's
// longest (a symbolic link to no file: where it points). Nothing is opened or created.
void check_output_file(const std::string& path, const char* option);

// Where writing `path`, which names no file yet, makes the file: `path` itself, or where the
// symbolic links it names point, link after link (a dangling link is written through).
std::filesystem::path where_a_new_file_is_made(const std::string& path);

// Throws boost::program_options::error naming `option` unless `path` is an existing folder
// this process may create files in.
void check_output_folder(const std::string& path, const char* option);

// Throws boost::program_options::error naming `option` if `output` is the file `input`, which
// the run reads (`what` says what it is: "the shapes CSV"): the same file by any name where
// both exist, else the same path once made absolute (a file the run will create).
void check_output_is_not(const std::string& output, const char* option, const std::string& input,
                         const std::string& what);

// The same for an input where "-" is standard input (--shapes -, --config -): there the
// regular file standard input is redirected from, if it is one.
void check_output_is_not_input(const std::string& output, const char* option, const std::string& input,
                               const std::string& what);

// The same for a SQLite database: the file itself and the journal, write-ahead log and
// shared-memory files SQLite keeps beside it, whose replacement loses committed data or
// leaves every reader failing.
void check_output_is_not_database(const std::string& output, const char* option, const std::string& db_path);

// A write that did not arrive: "cannot write PATH: reason". The tools exit with 2 on it (an
// environment error), as on any other failure that is not the user's input.
struct OutputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Writes `text` to `path`, losing nothing on failure where it can: a plain regular file of
// this user (or a new file) is written whole to a temporary file in its folder and renamed
// over it only then, keeping its permissions, so a full disk or a quota leaves an existing
// file as it was. A FIFO, a device, a symbolic link, a file with other names or another owner,
// the file behind standard output, and a file whose folder takes no new file or that cannot
// be renamed over are written in place. Throws OutputError.
void write_output_file(const std::string& path, const std::string& text);

// write_output_file for a file written after the work (a benchmark's or a tune's --json):
// its failure prints "TOOL: cannot write PATH: reason" and returns exit status 2, else 0, so
// that the tool can rank it below what the work itself found (a wrong result, a signal), as it
// ranks a failed write to standard output.
int write_output_file_after_work(const char* tool, const std::string& path, const std::string& text);

// Called first by the tools whose work ends at once (sgemm-db, sgemm-shapes, sgemm-roofline):
// a write to a pipe whose reader is gone (`| head`) then fails with EPIPE, which
// finish_standard_output reports with exit status 2, as their help says of output that fails,
// instead of ending the process by SIGPIPE (status 141, which a script reads as
// "interrupted", though the database change the command made stays). The tools that work for
// minutes (sgemm-tune, the benchmarks) keep SIGPIPE's default: `| head` ends them at its
// first write after the reader is gone, rather than letting them work on with nowhere to
// report to (the tune keeps every shape it finished).
void treat_a_closed_pipe_as_a_write_error();

// Sends what the tool printed so far to standard output; false where the write failed (a full
// disk), whose reason finish_standard_output then gives. The tools that work between the parts
// of their output call it after each part (sgemm-tune's dry run after each shape's plan,
// sgemm-bench after each shape's table): a pipe or file then gets each part when it is ready,
// where the C library would hold back 4 KiB at a time, and a reader gone (`| head -1`) ends
// the tool by SIGPIPE there rather than after all its work.
bool send_standard_output();

// Flushes standard output, as a C++ and as a C stream (printf), and checks that everything
// written to it arrived. If not (a full disk, a closed pipe) it prints "TOOL: cannot write
// WHAT: reason" and returns exit status 2, else 0. The reason is errno as the failing write
// left it (the C library drops what it could not write, so a later flush does not fail
// again): clear errno before the writes begin if nothing else runs until this call, else
// just before it (a failure of an earlier write then reads "the write failed").
int finish_standard_output(const char* tool, const std::string& what);
// finish_standard_output after work that made other calls since the writes began (a database,
// CUDA): errno is cleared first, so a failure of an earlier write reads "the write failed"
// rather than another call's reason; a failure of this last flush keeps its own.
int finish_standard_output_after_work(const char* tool, const std::string& what);

}  // namespace sgemm
