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
#include "src/util/error.h"

namespace sgemm {

struct ShapeRow {
    // The key tuned, its alignment class included: the tuner lays out operands of that class.
    // parse_shapes_csv sets the class of tightly packed operands (packed_alignment); a row
    // made by hand must set it too (ShapeKey's default, 16, pads an odd shape's rows).
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

// Device memory one tuning run of `row` needs: A, B, C, a copy of C and the split-K
// workspace bound (two more C-sized buffers per slice are not counted: a slack of 25%). A
// double: at the largest dimensions the CSV takes (2^31 - 1) it passes what a size_t holds.
double tuning_bytes(const ShapeKey& key);

// "file:line: M=.. needs X GiB of device memory for tuning; the GPU has Y GiB" for the first
// row that does not fit in `device_bytes`, else empty.
std::string first_shape_too_large(const ShapesFile& shapes, const std::string& file_name, std::size_t device_bytes);

}  // namespace sgemm
