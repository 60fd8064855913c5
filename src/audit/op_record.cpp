// The recorder's RecordFunction callbacks: a per-thread stack of the judged operators running on
// the thread, and the open call's window, shared by every thread under one mutex.
#include "audit/op_record.hpp"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "audit/allowed_ops.hpp"

namespace kernelrl::audit {

namespace {

constexpr std::size_t kMaxNames = 8;

enum class Kind : std::uint8_t { ALLOWED, REFUSED };

// The judged operators running on one thread, outermost first: allowed ones, then at most one
// refused one (what runs inside a refused operator is its implementation and is not stored).
// Trivial, so the thread_local needs no constructor or destructor: CUPTI callbacks read it, and a
// thread's last operators may end during its teardown.
struct ThreadOps {
  static constexpr int kCapacity = 64;
  const void* record[kCapacity];  // the at::RecordFunction, to match its end
  Kind kind[kCapacity];
  int depth;
  int n_allowed;
  int n_refused;
  // A chain of allowed operators past kCapacity (only kernels registered over allowed operators
  // nest them so deep): from then on this thread is never "inside an allowed operator".
  bool overflowed;
  std::uint64_t n_seen;  // operator starts seen on this thread: end_call's check
};

constinit thread_local ThreadOps t_ops{};

// The open call's window. The callbacks of every thread write it under the mutex, so end_call
// takes a record no late writer changes.
struct Window {
  std::mutex mutex;
  std::atomic<bool> open{false};
  OpCallRecord record;
};

Window g_window;
std::atomic<at::CallbackHandle> g_handle{at::INVALID_CALLBACK_HANDLE};

void add_once(std::vector<std::string>& names, const std::string& name) {
  if (names.size() < kMaxNames && std::find(names.begin(), names.end(), name) == names.end()) {
    names.push_back(name);
  }
}

// The alias keys whose kernels may compute: all but the composite ones (CompositeImplicitAutograd,
// its nested-tensor form, and torch 2's FuncTorchBatchedDecomposition, the same kernels for vmap),
// found by name since torch 1.13 lacks the last.
const std::vector<c10::DispatchKey>& computing_alias_keys() {
  static const std::vector<c10::DispatchKey> keys = [] {
    std::vector<c10::DispatchKey> out;
    using key_t = std::underlying_type_t<c10::DispatchKey>;
    for (auto k = static_cast<key_t>(c10::DispatchKey::StartOfAliasKeys);
         k <= static_cast<key_t>(c10::DispatchKey::EndOfAliasKeys); ++k) {
      const auto key = static_cast<c10::DispatchKey>(k);
      const std::string_view name = c10::toString(key);
      if (name != "CompositeImplicitAutograd" && name != "CompositeImplicitAutogradNestedTensor" &&
          name != "FuncTorchBatchedDecomposition") {
        out.push_back(key);
      }
    }
    return out;
  }();
  return keys;
}

// An operator computes only through the operators it dispatches when its only kernels for the
// runtime keys a composite kernel serves (the backends', dense, sparse, quantized, nested, and the
// autograd ones) are composite, and it has no alias kernel that may compute (an explicit composite,
// an autograd one). Kernels at wrapper keys (Tracer, Autocast, Functionalize, functorch's) pass the
// call on, so they do not count.
bool composite_only(const c10::OperatorName& name) {
  using c10::DispatchKey;
  const auto op = c10::Dispatcher::singleton().findOp(name);
  if (!op) return false;
  if (!op->hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd) &&
      !op->hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutogradNestedTensor)) {
    return false;
  }
  static const c10::DispatchKeySet served_by_composites =
      c10::getRuntimeDispatchKeySet(DispatchKey::CompositeImplicitAutograd) |
      c10::getRuntimeDispatchKeySet(DispatchKey::CompositeImplicitAutogradNestedTensor);
  if (op->hasKernelForAnyDispatchKey(served_by_composites)) return false;  // it looks at runtime keys only
  for (const DispatchKey key : computing_alias_keys()) {
    if (op->hasKernelForDispatchKey(key)) return false;
  }
  return true;
}

// nullopt: transparent (a range that is no operator, or a composite-only operator).
std::optional<Kind> classify(const at::RecordFunction& fn, std::string& name) {
  const auto op = fn.operator_name();
  if (!op) return std::nullopt;
  name = op->name;
  if (torch_op_allowed(name)) return Kind::ALLOWED;
  if (composite_only(*op)) return std::nullopt;
  return Kind::REFUSED;
}

void note(const std::string& name, Kind kind, bool top_level) {
  if (!g_window.open.load(std::memory_order_acquire)) return;
  std::lock_guard lock(g_window.mutex);
  if (!g_window.open.load(std::memory_order_relaxed)) return;
  OpCallRecord& r = g_window.record;
  if (top_level) {
    ++r.n_ops;
    if (kind == Kind::REFUSED) {
      ++r.n_refused;
      add_once(r.refused, name);
    }
  } else if (kind == Kind::REFUSED) {
    add_once(r.refused_inside_allowed, name);
  }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadOps& t = t_ops;
  ++t.n_seen;
  if (t.n_refused > 0) return nullptr;
  std::string name;
  const std::optional<Kind> kind = classify(fn, name);
  if (!kind) return nullptr;
  note(name, *kind, t.n_allowed == 0 && !t.overflowed);
  if (t.depth == ThreadOps::kCapacity) {
    t.overflowed = true;
    return nullptr;
  }
  t.record[t.depth] = &fn;
  t.kind[t.depth] = *kind;
  ++t.depth;
  ++(*kind == Kind::ALLOWED ? t.n_allowed : t.n_refused);
  return nullptr;
}

void pop(ThreadOps& t) {
  --t.depth;
  --(t.kind[t.depth] == Kind::ALLOWED ? t.n_allowed : t.n_refused);
}

// Ends come in the reverse order of starts on a thread; an end that matches no stored entry was
// transparent, inside a refused operator, or started before the callback was installed.
void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadOps& t = t_ops;
  for (int i = t.depth - 1; i >= 0; --i) {
    if (t.record[i] == &fn) {
      while (t.depth > i) pop(t);
      return;
    }
  }
}

at::CallbackHandle add_callback() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(on_start, on_end).needsInputs(false).scopes({at::RecordScope::FUNCTION}));
}

// Dispatches one operator on this thread and says whether the callback saw it.
bool sees_an_operator() {
  const std::uint64_t before = t_ops.n_seen;
  (void)at::empty({0});
  return t_ops.n_seen != before;
}

}  // namespace

common::Expected<OpRecorder*> OpRecorder::install() {
  static const common::Expected<OpRecorder*> installed = []() -> common::Expected<OpRecorder*> {
    g_handle = add_callback();
    if (!sees_an_operator()) {
      at::removeCallback(g_handle.exchange(at::INVALID_CALLBACK_HANDLE));
      return common::make_error(
          "the PyTorch operator recorder sees no operator: this libtorch runs no RecordFunction callbacks "
          "(built with PYTORCH_DISABLE_PER_OP_PROFILING?) or RecordFunction is off on the installing thread");
    }
    static OpRecorder recorder;
    return &recorder;
  }();
  return installed;
}

void OpRecorder::begin_call() {
  std::lock_guard lock(g_window.mutex);
  g_window.record = OpCallRecord{};
  g_window.open.store(true, std::memory_order_release);
}

OpCallRecord OpRecorder::end_call() {
  OpCallRecord r;
  {
    std::lock_guard lock(g_window.mutex);
    g_window.open.store(false, std::memory_order_relaxed);
    r = std::move(g_window.record);
    g_window.record = OpCallRecord{};
  }
  ThreadOps& t = t_ops;
  if (t.depth != 0 || t.overflowed) {
    // An operator still open here, outside any call of the runner's: a RecordFunction of the
    // candidate's own left open. Forget it; its end, if it comes, matches nothing.
    r.recording_intact = false;
    t.depth = t.n_allowed = t.n_refused = 0;
    t.overflowed = false;
  }
  if (sees_an_operator()) return r;
  r.recording_intact = false;
  at::enableRecordFunction(true);
  if (at::hasGlobalCallbacks()) at::reenableCallback(g_handle);  // else it went with the others
  if (!sees_an_operator()) g_handle = add_callback();  // it was removed
  return r;
}

bool OpRecorder::inside_allowed_op() {
  const ThreadOps& t = t_ops;
  return t.n_allowed > 0 && t.n_refused == 0 && !t.overflowed;
}

}  // namespace kernelrl::audit
