// A file whose text is compiled into the library by src/util/embed_files.py.
#pragma once
#include <string>
#include <vector>

namespace sgemm {

struct EmbeddedFile {
    const char* name;  // the file's base name
    const char* text;
};

// The text of the file named `name` among `files`; nullptr when none is.
inline const char* find_embedded(const std::vector<EmbeddedFile>& files, const std::string& name) {
    for (const EmbeddedFile& f : files)
        if (name == f.name) return f.text;
    return nullptr;
}

}  // namespace sgemm
