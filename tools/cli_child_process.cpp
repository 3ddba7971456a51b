#include "tools/cli_child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
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

// The child's side: never returns. `held` is the signal mask the parent had before it held
// the interrupts for the fork.
[[noreturn]] void be_the_child(const std::function<int(int)>& work, int read_fd, int write_fd, pid_t parent,
                               const sigset_t& held) {
    close(read_fd);
    restore_interrupts_as_started();
    sigprocmask(SIG_SETMASK, &held, nullptr);
    // A parent that is killed outright (SIGKILL) leaves no one to read the work: the child
    // stops as for a SIGTERM. Where the parent died already, it ends now.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(2);
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
    // The interrupts wait while the child is forked and named: one that came before the parent
    // knew its child would not be passed on, and one before the child set its own handler
    // would run the parent's there.
    const sigset_t held_now = interrupt_set();
    sigset_t held_before;
    pass_interrupts_to(0);
    sigprocmask(SIG_BLOCK, &held_now, &held_before);
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child < 0) {
        const std::string why = system_error("cannot start a child process");
        sigprocmask(SIG_SETMASK, &held_before, nullptr);
        close(fds[0]);
        close(fds[1]);
        throw Error(why);
    }
    if (child == 0) be_the_child(work, fds[0], fds[1], parent, held_before);

    close(fds[1]);
    pass_interrupts_to(child);
    sigprocmask(SIG_SETMASK, &held_before, nullptr);
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
    // The child closed its end as it exits. It is reaped with the interrupts held, so that none
    // is passed on to its process id once that is free for another process.
    sigprocmask(SIG_BLOCK, &held_now, nullptr);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    pass_interrupts_to(0);
    sigprocmask(SIG_SETMASK, &held_before, nullptr);
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

}  // namespace sgemm
