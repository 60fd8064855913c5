// The protocol between an evaluating child and the process that runs its candidate (the "runner"):
// pages both map, a header in them saying what to do and where a call's tensors are, and one
// doorbell each way. The child keeps the checker, the reference, the seeds and the report channel;
// the runner holds only the candidate's library and the tensors it is given. Host candidates' runner
// is forked from the child (eval/host_runner.hpp) and sees the tensors in the pages themselves; a
// native GPU candidate's (runner/device_runner.hpp) and a kernelbench candidate's
// (eval/kernelbench_serve.hpp) are forked by the child at its start, before it has anything of its
// evaluation (eval/runner_ahead.hpp), get ready, wait for START, and see the tensors in the child's
// device arena, mapped through CUDA IPC (a kernelbench one on the CPU: in the pages).
#pragma once

#include <kernelrl/abi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::runner {

constexpr int kMaxTensors = 256;
constexpr int kMaxDims = 16;
constexpr std::size_t kTextBytes = 4096;
constexpr std::size_t kAuditTextBytes = 1024;
constexpr std::size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

// PING follows every CALL inside the timed region: the runner answers it only from its loop, so a
// candidate that rings the CALL's reply itself and works on has that work timed all the same.
// ARM is the last step before a timed call: the runner evicts its caches (the CPU's, waited for; or
// the GPU's L2 from its own context, only enqueued: the call's first kernels queue behind that flush
// as they do behind the child's timer's own in process, so their launch is hidden the same way).
// IDLE is a call that runs none of the candidate's code: the runner waits for its context and
// answers, as after a call; the child times ARM, IDLE and PING like a call to learn what its clock
// costs around one (eval/child_timing.cpp).
// A kernelbench runner (eval/kernelbench_serve.hpp) also takes ARGS, before a call and outside any
// timed region: the call's argument list (the text: which argument is which input slot, the others
// as Python literals), and COLLECT, after a call and outside any timed region: the tensors the call
// returned, copied into the output slots. A kernelbench runner forked ahead of its evaluation waits
// for START (request 1; the text: what to set up, as JSON) and answers it with its set-up report.
enum class Op : std::int32_t { LOAD = 1, ARM = 2, CALL = 3, EXIT = 4, PING = 5, ARGS = 6, COLLECT = 7, START = 8, IDLE = 9 };

// Load outcomes in Header::rc.
constexpr std::int32_t kLoaded = 0, kCannotLoad = 1, kNoEntryPoint = 2;

// A kernelbench call's outcome in Header::rc: it failed (the text says why: RUNTIME_ERROR), broke a
// rule (REJECTED), or returned outputs that do not fit the output slots (their count, shapes and
// dtypes are in Header::returned, for the checker to name the difference).
constexpr std::int32_t kCallDone = 0, kCallFailed = 1, kCallRefused = 2, kCallWrongOutputs = 3;
constexpr int kMaxReturned = 64;

struct TensorSlot {
  std::uint64_t offset;  // bytes from the start of the data region (pages or device arena)
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t shape[kMaxDims];
};

// The start of the shared pages. The child writes op, the counts and the slots, then rings
// `command`; the runner writes rc and text, then rings `reply`. The runner's process holds the
// candidate, so the child takes from here only rc and a bounded text, never a size or an offset.
struct Header {
  sandbox::Doorbell command;  // child -> runner: the number of the request
  sandbox::Doorbell reply;    // runner -> child: the number of the request answered
  Op op;
  std::int32_t flush_caches;  // ARM: evict the caches first (the child's timer flushes its own)
  std::int32_t rc;
  std::int32_t audit_ops;  // kernelbench CALL: run under the PyTorch operator audit, refused ones in audit_text
  std::int32_t n_inputs, n_params, n_outputs;
  // A kernelbench CALL answered kCallWrongOutputs: what it returned (offset unused; ndim -1: not a tensor).
  std::int32_t n_returned;
  TensorSlot returned[kMaxReturned];
  TensorSlot slots[kMaxTensors];
  char text[kTextBytes];
  char audit_text[kAuditTextBytes];  // the refused operators of an audited kernelbench CALL, one per line
  // A GPU runner's arena: the device the child uses and the cudaIpcMemHandle_t of its allocation,
  // written before the runner starts; arena_bytes bounds every slot (checked by the runner).
  std::int32_t device;
  std::uint64_t arena_bytes;
  unsigned char ipc_handle[kIpcHandleBytes];
};
constexpr std::size_t kDataOffset = (sizeof(Header) + 4095) / 4096 * 4096;

void write_text(Header* h, const std::string& s);
std::string read_text(const Header* h);

// ABI views of slots, rebuilt for every call (a call may scribble on the last ones).
struct Views {
  std::vector<DLTensor> views;
  std::vector<std::array<std::int64_t, kMaxDims>> shapes, strides;
};

// The candidate's entry point (kernelrl/abi.h).
using forward_fn = int (*)(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*);

// What a runner does around the protocol's requests; each reports failures through the header's text.
struct RunnerHooks {
  std::byte* data = nullptr;             // where slot offsets start in this process
  std::uint64_t data_bytes = 0;          // slots past it are refused
  DLDevice device{kDLCPU, 0};            // the views' device
  void* stream = nullptr;                // passed to kernelrl_forward
  void (*flush)(void* state) = nullptr;  // ARM with flush_caches
  // After kernelrl_forward returned 0: nullptr when the call's work ended cleanly, else why not.
  const char* (*finish)(void* state) = nullptr;
  void* state = nullptr;
};

// First thing in a runner forked by the evaluating child (eval/runner_ahead.hpp): it dies with
// `parent` (and exits 1 when `parent` is not its parent any more) and keeps none of the child's
// descriptors, the report pipe above all (the mapping of `pages` stays).
void begin_forked_runner(sandbox::SharedPages& pages, pid_t parent);

// Waits for START (request 1) and returns its text; exits 1 when the parent died first or the
// request is another.
std::string wait_for_start(Header* h, pid_t parent);

// Answers the runner's first request: its set-up report (rc 0), or why it could not set itself up
// (rc -1, and the runner exits 1).
void answer_set_up(Header* h, const std::string& report);
[[noreturn]] void fail_set_up(Header* h, const std::string& why);

// Waits for request `seq`; false when the parent died first. After an ARM the next request is a
// timed call, and after a call the child times the reference's: the runner spins through both.
bool wait_for_request(Header* h, std::uint32_t seq, Op last, pid_t parent);

// Serves requests until EXIT (exits 0), the parent's death or a broken request (exits 1). The
// first reply (request 1) must have been rung by the caller, with its report in the text.
[[noreturn]] void serve(Header* h, pid_t parent, const std::string& artifact, const RunnerHooks& hooks);

}  // namespace kernelrl::runner
