// A file whose text is compiled into the library by src/util/embed_files.py.
#pragma once
#include <vector>

namespace sgemm {

struct EmbeddedFile {
    const char* name;  // the file's base name
    const char* text;
};

}  // namespace sgemm
