#include "tools/cli_output.h"

#include <boost/program_options/errors.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace sgemm {
namespace fs = std::filesystem;

void check_output_file(const std::string& path, const char* option) {
    const std::string what = std::string("--") + option + " " + path;
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw boost::program_options::error(what + ": is a folder, not a file");
    const bool existed = fs::exists(path, ec);
    std::ofstream probe(path, std::ios::app);
    if (!probe) throw boost::program_options::error(what + ": cannot write it (" + std::strerror(errno) + ")");
    probe.close();
    if (!existed) fs::remove(path, ec);
}

void check_output_folder(const std::string& path, const char* option) {
    std::error_code ec;
    if (!fs::is_directory(path, ec))
        throw boost::program_options::error(std::string("--") + option + " " + path + ": no such folder");
}

}  // namespace sgemm
