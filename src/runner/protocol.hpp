// The protocol between an evaluating child and the process that runs its candidate (the "runner",
// a program of its own: tools/runner): pages both map (a memory file the child creates and the
// runner inherits as one descriptor), a header in them saying what to do and where a call's tensors
// are, and one doorbell each way. The child keeps the checker, the reference, the seeds, the clock
// and the report channel; the runner holds only the candidate and the tensors it is given. Nothing
// the runner writes here is trusted beyond its bounds: the child reads rc and bounded texts, never
// a size or an offset, and decides the verdict and the time from what it observes itself
// (docs/security.md, "One isolation design").
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
constexpr std::size_t kAuditTextBytes = 16384;  // a record with a few foreign kernels' mangled names
constexpr std::size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

// The requests, in the order an evaluation sends them: START once (the text: what to set up, as
// JSON; answered with the runner's set-up and confinement report), IDLE calls (no candidate code
// has been loaded yet: the child learns what its clock costs around a call), LOAD, then for every
// call of the candidate (kernelbench: ARGS, the call's argument list, before it) a CALL, then,
// outside any timed region, RECORD (what was recorded of the call below Python, in the audit text)
// and (kernelbench) COLLECT (the returned tensors copied into the output slots), and EXIT. The
// runner waits for each request asleep (a futex), never spinning: CPU time it spends between
// requests is work the child did not ask for (eval/runner_candidate.cpp counts it).
// On a GPU a CALL and an IDLE first enqueue an L2 flush in the runner's context, so the call's
// kernels queue behind it and their launch is hidden as it would be in process (idle calls alike).
enum class Op : std::int32_t { START = 1, LOAD = 2, CALL = 3, IDLE = 4, ARGS = 5, COLLECT = 6, RECORD = 7, EXIT = 8 };

// Load outcomes in Header::rc.
constexpr std::int32_t kLoaded = 0, kCannotLoad = 1, kNoEntryPoint = 2;

// A call's outcome in Header::rc: it failed (the text says why: RUNTIME_ERROR), broke a rule
// (REJECTED), or (kernelbench) returned outputs that do not fit the output slots (their count,
// shapes and dtypes are in Header::returned, for the checker to name the difference).
constexpr std::int32_t kCallDone = 0, kCallFailed = 1, kCallRefused = 2, kCallWrongOutputs = 3;
constexpr int kMaxReturned = 64;

struct TensorSlot {
  std::uint64_t offset;  // bytes from the start of the data region (pages or device arena)
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t shape[kMaxDims];
};

// The start of the shared pages. The child writes op, the counts and the slots, then rings
// `command`; the runner writes rc and the texts, then rings `reply`.
struct Header {
  sandbox::Doorbell command;  // child -> runner: the number of the request
  sandbox::Doorbell reply;    // runner -> child: the number of the request answered
  Op op;
  std::int32_t rc;
  std::int32_t n_inputs, n_params, n_outputs;
  // A kernelbench CALL answered kCallWrongOutputs: what it returned (offset unused; ndim -1: not a tensor).
  std::int32_t n_returned;
  TensorSlot returned[kMaxReturned];
  TensorSlot slots[kMaxTensors];
  char text[kTextBytes];
  // What the runner recorded of the call below Python (audit/): one JSON object, {} when nothing.
  char audit_text[kAuditTextBytes];
  // A GPU runner's arena: the device the child uses and the cudaIpcMemHandle_t of its allocation,
  // written before START; arena_bytes bounds every slot (checked by the runner).
  std::int32_t device;
  std::uint64_t arena_bytes;
  unsigned char ipc_handle[kIpcHandleBytes];
};
constexpr std::size_t kDataOffset = (sizeof(Header) + 4095) / 4096 * 4096;

void write_text(Header* h, const std::string& s);
std::string read_text(const Header* h);
void write_audit_text(Header* h, const std::string& s);
std::string read_audit_text(const Header* h);

// ABI views of slots, rebuilt for every call (a call may scribble on the last ones).
struct Views {
  std::vector<DLTensor> views;
  std::vector<std::array<std::int64_t, kMaxDims>> shapes, strides;
};

// The candidate's entry point (kernelrl/abi.h).
using forward_fn = int (*)(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*);

// What a native or host runner does around the protocol's requests; each reports failures through
// the header's text.
struct RunnerHooks {
  std::byte* data = nullptr;     // where slot offsets start in this process
  std::uint64_t data_bytes = 0;  // slots past it are refused
  DLDevice device{kDLCPU, 0};    // the views' device
  void* stream = nullptr;        // passed to kernelrl_forward
  // First in a CALL and an IDLE: the runner's L2 flush, enqueued (a GPU runner).
  void (*before_call)(void* state) = nullptr;
  // Right before the candidate's code in a CALL: the call's record starts.
  void (*begin_record)(void* state) = nullptr;
  // After kernelrl_forward returned 0 (and after an IDLE): nullptr when the call's work ended
  // cleanly, else why not.
  const char* (*finish)(void* state) = nullptr;
  // RECORD, after the call's end and outside the timed region: what was recorded of the last call
  // (its launches), as the audit text's JSON; may be null.
  std::string (*call_record)(void* state) = nullptr;
  void* state = nullptr;
};

// Answers request `seq`: brings the kernel's count of this thread's CPU time up to date (reading its
// own CPU clock does), then rings. The child counts the runner's CPU time from each answer to the
// next request (eval/runner_candidate.cpp), so the count must not lag behind the work just done.
void answer(Header* h, std::uint32_t seq);

// Waits for request `seq` asleep; false when `parent` is gone (PR_SET_PDEATHSIG ends this process
// first; the parent is also checked once an hour).
bool wait_for_request(Header* h, std::uint32_t seq, pid_t parent);

// Waits for START (request 1) and returns its text; exits 1 when the parent died first or the
// request is another.
std::string wait_for_start(Header* h, pid_t parent);

// Answers the runner's first request: its set-up report (rc 0), or why it could not set itself up
// (rc -1, and the runner exits 1).
void answer_set_up(Header* h, const std::string& report);
[[noreturn]] void fail_set_up(Header* h, const std::string& why);

// Serves a native or host candidate's requests after START (IDLE, LOAD of `artifact`, CALL) until
// EXIT (exits 0), the parent's death or a broken request (exits 1).
[[noreturn]] void serve(Header* h, pid_t parent, const std::string& artifact, const RunnerHooks& hooks);

}  // namespace kernelrl::runner
