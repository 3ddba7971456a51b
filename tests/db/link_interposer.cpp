#include "tests/db/link_interposer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <utility>

namespace sgemm::testing {

namespace {
std::function<int(const char*, const char*)> next_link;
int calls = 0;
}  // namespace

void instead_of_next_link(std::function<int(const char* from, const char* to)> instead) {
    next_link = std::move(instead);
    calls = 0;
}

void link_as_the_system_does() { next_link = nullptr; }

int link_calls() { return calls; }

// linkat, which the library does not call, links as link(2) does with no flags.
int system_link(const char* from, const char* to) { return linkat(AT_FDCWD, from, AT_FDCWD, to, 0); }

}  // namespace sgemm::testing

// The library's link(2): the armed plan once, else the system's. noexcept, as the C library
// declares it: a plan that throws fails its test and the link (EIO), rather than end the
// whole test program.
extern "C" int link(const char* from, const char* to) noexcept {
    using namespace sgemm::testing;
    ++calls;
    if (!next_link) return system_link(from, to);
    const auto instead = std::move(next_link);
    next_link = nullptr;
    try {
        return instead(from, to);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "the test's plan for link(2) threw: " << e.what();
    }
    errno = EIO;
    return -1;
}
