// The tuner's input: a CSV of GEMM shapes, one per line.
//
//   M,N,K[,transA,transB,precision,weight,name]     header, columns in any order
//   8,4096,4096,N,N,fp32,32,o                        one shape
//   # a comment                                      ignored, as are blank lines
//
// M, N, K are required positive integers; transA/transB are N or T (default N); precision
// is fp32 (the default; tf32 is refused: it is not tuned yet); weight is how many times a step
// calls the shape (default 1); name is free text. A shape listed twice is merged (weights
// added) with a warning. Every error names the file, the line and the problem, and the
// whole file is checked before anything is tuned.
#pragma once
#include <cstddef>
#include <istream>
#include <string>
#include <vector>

#include "db/shape_key.h"
#include "tuner/longest_tunable_row.h"
#include "src/util/error.h"

namespace sgemm {

struct ShapeRow {
    // The key tuned, its alignment class included: the tuner lays out operands of that class.
    // parse_shapes_csv sets the class of tightly packed operands (packed_alignment), or the
    // row's align column; a row made by hand must set it too (ShapeKey's default, 16, pads an
    // odd shape's rows).
    ShapeKey key;
    double weight = 1.0;
    std::string name;
    int line = 0;
};

struct ShapesFile {
    std::vector<ShapeRow> rows;         // in file order, duplicates merged into the first
    std::vector<std::string> warnings;  // "file:line: ..." for each merged duplicate
};

// A problem with the shapes file; what() is "file:line: problem".
struct ShapesCsvError : Error {
    using Error::Error;
};

ShapesFile parse_shapes_csv(std::istream& in, const std::string& file_name);
ShapesFile load_shapes_csv(const std::string& path);

// Device memory the operands of one tuning run of `key` take at their peak (GemmProblem,
// tuner/gemm_problem.h): A, B, C's first values and the output, while the bound's absolute
// copies of A, B and C exist too, or (fp64_reference) while the fp64 copies of A, B and C
// do, or while their copies laid out anew do (one in class 16, up to three below: counted as
// three); plus 10% for cuBLAS's and the L2 flush's buffers. A candidate's split-K workspace is the tuner's to
// check (a candidate whose workspace does not fit is invalid, not fatal). A
// double: at the largest dimensions the CSV takes (2^31 - 1) it passes what a size_t holds.
double tuning_bytes(const ShapeKey& key, bool fp64_reference);

// "file:line: M=.. needs X GiB of device memory for tuning; the GPU has Y GiB" for each row
// that does not fit in `device_bytes` (or whose rows are longer than kLongestCheckedRow, which
// it says instead), in the file's order: every one at once, so that a user fixes them in one
// pass. Rows of no line (the database's misses) are named by their key and name alone.
std::vector<std::string> shapes_too_large(const ShapesFile& shapes, const std::string& file_name,
                                          std::size_t device_bytes, bool fp64_reference);

// Removes the rows that do not fit in `device_bytes` (or have rows too long) and returns why
// each was removed, as shapes_too_large words it: the misses dispatch recorded are not the
// user's to edit, so those that fit are tuned and the rest named.
std::vector<std::string> drop_shapes_too_large(ShapesFile& shapes, const std::string& file_name, std::size_t device_bytes,
                                               bool fp64_reference);

}  // namespace sgemm
