// The process a GPU (native) candidate runs in: the program kernelrl-gpu-runner, started by the
// evaluating child with fork and exec (a process forked after CUDA started cannot use CUDA, and
// exec leaves none of the child's memory behind: no reference, no seeds, no interpreter). It maps
// the protocol's pages from an inherited memory file, opens the child's device arena through CUDA
// IPC in a context of its own, confines itself as the child does (write confinement, system-call
// filter), reports, loads the candidate and serves calls (runner/protocol.hpp): each call is the
// candidate's kernelrl_forward on its own stream over views of the arena, then the whole context
// synchronised and its error read, before the loop answers. A device reset or a broken context
// there breaks only the runner's context; the child reads the outputs from its own mapping.
#pragma once

namespace kernelrl::runner {

// kernelrl-gpu-runner PAGES_FD PAGES_BYTES PARENT_PID ARTIFACT
int run_device_runner(int argc, char** argv);

}  // namespace kernelrl::runner
