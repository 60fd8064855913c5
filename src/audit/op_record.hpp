// The PyTorch operators a kernelbench candidate's call dispatched, recorded below Python in the
// candidate's own process (the runner) with an at::RecordFunction global callback. It runs inside
// c10::Dispatcher::call for every observed operator, from Python or C++, on every thread, whatever
// the Python dispatch key (torch._C._ExcludeDispatchKeyGuard, c10::impl::ExcludeDispatchKeyGuard do
// not hide an operator from it, as they hide it from a TorchDispatchMode), and it is installed for
// the whole process, so a call that is audited cannot be told from one that is not.
//
// What is judged: the TOP-LEVEL operators of a thread, those dispatched while no judged operator
// runs on that thread. An operator dispatched inside an allowed one (aten::zeros' aten::zero_) is
// that operator's implementation; one dispatched inside a refused one needs no second refusal. Two
// kinds of record are transparent (neither judged nor hiding what they run): ranges that are no
// operator (RECORD_FUNCTION("name", ...)), and operators whose only kernel is a composite one
// (CompositeImplicitAutograd: aten::numpy_T, aten::type_as, aten::conv2d), which compute nothing
// themselves but through the operators they dispatch; those are judged in their place. So
// `x.T` passes (aten::permute) and F.conv2d is refused as aten::convolution, much as the
// TorchDispatchMode audit (eval/op_audit.hpp) saw them after decomposition. An operator that also
// has a kernel of its own is judged by its own name: aten::matmul, which has nested-tensor kernels
// (torch 1.13 and 2.11), is refused as aten::matmul where the mode saw aten::mm.
//
// What it does not see (the candidate's ways around it; the static rules should refuse the names):
// - From Python, on the calling thread: torch.autograd._enable_record_function(False)
//   (torch._C._autograd._enable_record_function) switches RecordFunction off for the thread: the
//   operators until it is switched back on are not seen. Left off at the call's end, it is seen
//   (OpCallRecord::recording_intact) and switched back on; switched off and on inside the call, it
//   is not seen at all.
// - From Python, process-wide: torch.autograd._clear_callbacks() (torch._C._autograd.
//   _clear_callbacks) removes every RecordFunction callback, this one too: seen at the call's end
//   (recording_intact false) and added again; the operators after it in that call are not seen.
// - From Python, an operator called for a dispatch key: OpOverload._op_dk(key, ...) (torch 1.13
//   and 2; OpOverload.decompose uses it) goes through callBoxedForDispatchKey, torch 2's
//   OpOverload.redispatch(keyset, ...) through redispatchBoxed: neither runs RecordFunction. Only
//   what that kernel dispatches itself is seen (torch 1.13's CPU mm: aten::resolve_conj, refused).
// - A kernel registered over an allowed operator (torch.library.Library("aten", "IMPL"),
//   TORCH_LIBRARY_IMPL(aten, ...), a __torch_dispatch__ handler of a tensor subclass or mode), or a
//   new overload of an allowed name (TORCH_LIBRARY_FRAGMENT(aten, m) m.def("zeros.x(...)")): what
//   it dispatches runs inside an allowed operator and is not judged. Refused operators there are
//   listed apart (OpCallRecord::refused_inside_allowed) and inside_allowed_op() is false while they
//   run, but it is true in the kernel's own body: kernels it launches itself look like torch's.
// - From C++ (the candidate's extension): at::enableRecordFunction(false),
//   at::RecordFunctionGuard(false) / at::DisableRecordFunctionGuard, at::set_record_function_tls_,
//   an at::ThreadLocalStateGuard over a state taken with it off (all thread-local; seen when left
//   off, as above); at::clearCallbacks / clearGlobalCallbacks / removeCallback / disableCallback
//   (handles are small consecutive numbers; seen at the call's end, as above);
//   Dispatcher::redispatch, at::redispatch::*, OperatorHandle::redispatchBoxed and
//   callBoxedForDispatchKey (no RecordFunction); backend entry points that skip the dispatcher
//   (at::cpu::mm, at::cuda::mm, at::compositeexplicitautograd::*, at::native::*, at::cuda::blas),
//   and cuBLAS/cuDNN directly: for those the CUDA launch audit is the answer; an at::RecordFunction
//   of its own started with an allowed operator's schema and left open (what follows is "inside"
//   it; seen when still open on the calling thread at the call's end).
// - Operators in c10::ObservedOperators' unobserved list (aten::size, aten::is_leaf,
//   aten::output_nr, aten::_version, aten::is_complex, profiler::_record_function_enter/_exit)
//   never reach callbacks;
//   the list is read when an operator is registered, so adding aten names to it later changes
//   nothing. None of them computes.
// - Threads: the end-of-call check covers the calling thread only; a thread of the candidate's
//   with RecordFunction off goes unseen. Operators on torch's intra-op pool threads are judged as
//   top-level there (an allowed operator whose parallel workers dispatched operators would show
//   them; clone, fill_, copy_ and to of 4M floats on the CPU do not: tested).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::audit {

// What one candidate call dispatched, on every thread, between begin_call and end_call.
struct OpCallRecord {
  // Refused top-level operators ("aten::mm", a candidate's own "mylib::op"), each once, in the
  // order first seen, at most 8.
  std::vector<std::string> refused;
  std::int64_t n_ops = 0;      // top-level operators judged, allowed and refused, repeats included
  std::int64_t n_refused = 0;  // of which refused, repeats included
  // Refused operators dispatched inside an allowed one, each once, at most 8. Not judged (an
  // allowed operator's implementation may use them), but a kernel the candidate registered over an
  // allowed operator shows its work here.
  std::vector<std::string> refused_inside_allowed;
  // false when the recording was found switched off at the call's end: the callback removed or
  // disabled, RecordFunction off on the calling thread, or an operator still open on it. The
  // record is then incomplete; end_call has switched the recording back on for the next call.
  bool recording_intact = true;
};

class OpRecorder {
 public:
  // Installs the global callback (once per process; later calls return the same recorder) and
  // checks on this thread that it sees an operator. Fails when it does not (a libtorch built with
  // PYTORCH_DISABLE_PER_OP_PROFILING, RecordFunction off on this thread). Any thread.
  static common::Expected<OpRecorder*> install();

  // Opens a call's window: from here operators on every thread are judged. One window at a time:
  // begin_call and end_call come from one thread, outside any operator, around the candidate's call
  // and nothing else.
  void begin_call();

  // Closes the window and returns what was judged in it; then checks, with one operator of its own
  // (an empty CPU tensor, outside the window), that the recording still works on this thread, and
  // switches it back on when it does not (recording_intact false).
  OpCallRecord end_call();

  // Whether an allowed operator is running on the calling thread with no refused one inside it
  // (zeros' fill_ kernel: true; inside aten::mm, or at no operator: false). For the CUDA launch
  // audit's CUPTI callback, so it must stay cheap and lock-free: thread-local reads only.
  static bool inside_allowed_op();

  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

 private:
  OpRecorder() = default;
};

}  // namespace kernelrl::audit
