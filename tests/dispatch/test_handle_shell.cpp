// The handle's shell without a GPU: a live handle gives its dispatcher, a retired one is
// refused as destroyed, and a parent's handle is refused in a forked child, live or retired.
// The dispatcher is only pointed to, never used, so any address stands for one here.
#include <gtest/gtest.h>

#include <string>

#include "src/dispatch/handle_shell.h"
#include "src/dispatch/last_error.h"
#include "tests/db/fixture.h"

using namespace sgemm::testing;

namespace {

sgemm::Dispatcher* stand_in_dispatcher() {
    static int somewhere;
    return reinterpret_cast<sgemm::Dispatcher*>(&somewhere);
}

bool last_error_has(const std::string& text) { return std::string(sgemm::last_error()).find(text) != std::string::npos; }

}  // namespace

TEST(HandleShell, ALiveHandleGivesItsDispatcherAndARetiredOneIsRefused) {
    sgemm_dispatch_t handle = sgemm::new_handle(stand_in_dispatcher());
    EXPECT_EQ(sgemm::dispatcher_of(handle), stand_in_dispatcher());
    EXPECT_FALSE(sgemm::inherited_through_fork(handle));
    EXPECT_EQ(sgemm::retire(handle), stand_in_dispatcher()) << "retire hands the dispatcher over, to be freed";
    // Else a leak checker would take a later block at the freed dispatcher's address for one in use.
    EXPECT_EQ(handle->dispatcher, nullptr) << "the shell still points to the dispatcher the caller frees";
    EXPECT_EQ(sgemm::dispatcher_of(handle), nullptr);
    EXPECT_TRUE(last_error_has("the handle was destroyed")) << sgemm::last_error();
}

TEST(HandleShell, AParentsHandleIsRefusedInAForkedChildLiveOrRetired) {
    sgemm_dispatch_t handle = sgemm::new_handle(stand_in_dispatcher());
    EXPECT_EQ(in_child([&] {
                  if (!sgemm::inherited_through_fork(handle)) throw sgemm::Error("the child took it for its own");
                  if (sgemm::dispatcher_of(handle)) throw sgemm::Error("the child got the parent's dispatcher");
                  if (!last_error_has("forked from its parent")) throw sgemm::Error(sgemm::last_error());
                  // destroy in the child retires the copy: from then on it reads as destroyed.
                  if (sgemm::retire(handle) != stand_in_dispatcher()) throw sgemm::Error("retire lost the pointer");
                  // The one pointer to the parent's dispatcher here, which the child may not free.
                  if (handle->dispatcher != stand_in_dispatcher()) throw sgemm::Error("the child's shell dropped it");
                  if (sgemm::inherited_through_fork(handle)) throw sgemm::Error("a retired copy reads as inherited");
                  if (sgemm::dispatcher_of(handle)) throw sgemm::Error("a retired copy gave a dispatcher");
                  if (!last_error_has("the handle was destroyed")) throw sgemm::Error(sgemm::last_error());
              }),
              0);
    EXPECT_EQ(sgemm::dispatcher_of(handle), stand_in_dispatcher()) << "the child's retire is its own copy's";
    EXPECT_EQ(sgemm::retire(handle), stand_in_dispatcher());
}
