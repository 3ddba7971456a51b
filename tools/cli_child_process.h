// Work run in a child process, for work that can leave its process unable to go on: a CUDA
// context that a kernel's fault has lost stays lost until the process ends, so sgemm-tune
// tunes in children and starts a new one after a fault. The parent stays off the GPU.
#pragma once
#include <functional>
#include <string>

namespace sgemm {

struct ChildEnd {
    int exit_status = 0;  // as the child returned it, where no signal ended it
    int signal = 0;       // the signal that ended the child, or 0
    std::string output;   // everything the child wrote to its output descriptor
};

// Forks, runs `work` in the child with the write end of a pipe, and exits the child with the
// status `work` returns; meanwhile reads the pipe to its end and waits for the child, passing
// signals on to it (pass_interrupts_to in tools/cli_interrupt.h). The child is sent SIGTERM if
// this process dies first. The caller must not have started threads or CUDA: a fork copies
// neither as they run. Throws Error where no pipe or process can be made.
ChildEnd run_in_child(const std::function<int(int output_fd)>& work);

// Writes all of `bytes` to `fd`; false where it could not (the reader gone, say).
bool write_all(int fd, const std::string& bytes);

}  // namespace sgemm
