#include "tests/db/link_interposer.h"

#include <fcntl.h>
#include <unistd.h>

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

// The library's link(2): the armed plan once, else the system's.
extern "C" int link(const char* from, const char* to) noexcept {
    using namespace sgemm::testing;
    ++calls;
    if (next_link) {
        const auto instead = std::move(next_link);
        next_link = nullptr;
        return instead(from, to);
    }
    return system_link(from, to);
}
