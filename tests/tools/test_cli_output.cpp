// A tool's file written after its work (a benchmark's or a tune's --json): a failure is said
// on standard error and comes back as exit status 2, which the tool ranks below what its work
// found, rather than thrown past it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/cli_output.h"

using namespace sgemm;
namespace fs = std::filesystem;

namespace {

std::string contents_of(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(WriteOutputFileAfterWork, WritesTheFileAndReturnsZero) {
    const fs::path folder = fs::temp_directory_path() / ("cli-output-" + std::to_string(::getpid()));
    fs::create_directories(folder);
    const fs::path file = folder / "table.json";
    testing::internal::CaptureStderr();
    const int status = write_output_file_after_work("tool", file.string(), "{\"a\": 1}\n");
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 0);
    EXPECT_EQ(said, "");
    EXPECT_EQ(contents_of(file), "{\"a\": 1}\n");
    fs::remove_all(folder);
}

TEST(WriteOutputFileAfterWork, AFullDiskIsSaidAndGivesStatusTwo) {
    if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here to stand for a full disk";
    testing::internal::CaptureStderr();
    const int status = write_output_file_after_work("tool", "/dev/full", "{}\n");
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 2);
    EXPECT_EQ(said, "tool: cannot write /dev/full: No space left on device\n");
}

TEST(WriteOutputFileAfterWork, AFolderThatIsGoneIsSaidAndGivesStatusTwo) {
    // The tools check the folder before their work; it can still be removed while they work.
    const fs::path gone = fs::temp_directory_path() / ("cli-output-gone-" + std::to_string(::getpid())) / "t.json";
    testing::internal::CaptureStderr();
    const int status = write_output_file_after_work("tool", gone.string(), "{}\n");
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, 2);
    EXPECT_NE(said.find("tool: cannot write " + gone.string() + ": No such file or directory"), std::string::npos)
        << said;
    EXPECT_FALSE(fs::exists(gone));
}

}  // namespace
