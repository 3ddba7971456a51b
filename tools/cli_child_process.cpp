#include "tools/cli_child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "src/util/error.h"
#include "tools/cli_interrupt.h"

namespace sgemm {

namespace {

std::string system_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// The child's side: never returns.
[[noreturn]] void be_the_child(const std::function<int(int)>& work, int read_fd, int write_fd) {
    close(read_fd);
    restore_interrupts_as_started();
    int status = 2;
    try {
        status = work(write_fd);
    } catch (const std::exception& e) {  // `work` reports its own errors; this is a last word
        std::fprintf(stderr, "%s\n", e.what());
    }
    close(write_fd);
    std::fflush(nullptr);
    std::exit(status);
}

}  // namespace

ChildEnd run_in_child(const std::function<int(int)>& work) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw Error(system_error("cannot make a pipe for the child process"));
    // What the parent has buffered would be written twice, once by each process.
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child < 0) {
        const std::string why = system_error("cannot start a child process");
        close(fds[0]);
        close(fds[1]);
        throw Error(why);
    }
    if (child == 0) be_the_child(work, fds[0], fds[1]);

    close(fds[1]);
    pass_interrupts_to(child);
    ChildEnd end;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t got = read(fds[0], buffer, sizeof buffer);
        if (got > 0) {
            end.output.append(buffer, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
            break;  // the end, or a read error: what came is all there is
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    pass_interrupts_to(0);
    if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
    else end.exit_status = WEXITSTATUS(status);
    return end;
}

bool write_all(int fd, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = write(fd, bytes.data() + done, bytes.size() - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return false;
        done += static_cast<std::size_t>(wrote);
    }
    return true;
}

int end_as(const ChildEnd& child) {
    return child.signal != 0 ? end_by_signal(child.signal) : child.exit_status;
}

}  // namespace sgemm
