// link(2) under a test's control. The database library puts a new database in place with a
// hard link (db/publish.h), which fails rather than replace a file; a test makes that link
// fail as the system would, or looks at the file at the moment it appears. A race (another
// process making the file between the check and the link) cannot be timed from outside, so
// an executable linked with this library defines link(2) itself: the database library,
// linked in statically, calls that definition rather than the C library's. Unarmed, it links
// as the system does.
#pragma once
#include <functional>

namespace sgemm::testing {

// What the next link(2) of this process does in place of linking, given its two paths; it
// returns what link(2) would (-1 with errno set, on a failure). Counts calls from zero again.
// Not thread-safe: a test arms the link while no other thread of its process links.
void instead_of_next_link(std::function<int(const char* from, const char* to)> instead);

// Disarms: the next link(2) links.
void link_as_the_system_does();

// The link(2) calls since the last instead_of_next_link: so that a test knows its write
// reached the link.
int link_calls();

// The system's link, for a test's plan that links too.
int system_link(const char* from, const char* to);

}  // namespace sgemm::testing
