#include "runner/protocol.hpp"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

namespace kernelrl::runner {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kParentCheck = std::chrono::hours(1);

void build_views(const Header* h, const RunnerHooks& hooks, int first, int n, Views& out) {
  out.views.assign(static_cast<std::size_t>(n), DLTensor{});
  out.shapes.resize(static_cast<std::size_t>(n));
  out.strides.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const TensorSlot& s = h->slots[first + i];
    auto& shape = out.shapes[static_cast<std::size_t>(i)];
    auto& strides = out.strides[static_cast<std::size_t>(i)];
    std::int64_t stride = 1;
    for (int d = s.ndim - 1; d >= 0; --d) {
      shape[static_cast<std::size_t>(d)] = s.shape[d];
      strides[static_cast<std::size_t>(d)] = stride;
      stride *= s.shape[d];
    }
    DLTensor& v = out.views[static_cast<std::size_t>(i)];
    v.data = hooks.data + s.offset;
    v.device = hooks.device;
    v.ndim = s.ndim;
    v.dtype = s.dtype;
    v.shape = shape.data();
    v.strides = strides.data();
    v.byte_offset = 0;
  }
}

// Slots the child wrote are trusted, but a header the candidate scribbled on before a call is not:
// every slot must lie inside the data region, with dimensions the views can hold.
bool slots_valid(const Header* h, const RunnerHooks& hooks) {
  const int n = h->n_inputs + h->n_params + h->n_outputs;
  if (h->n_inputs < 0 || h->n_params < 0 || h->n_outputs < 0 || n > kMaxTensors) return false;
  for (int i = 0; i < n; ++i) {
    const TensorSlot& s = h->slots[i];
    if (s.ndim < 0 || s.ndim > kMaxDims || s.offset > hooks.data_bytes) return false;
  }
  return true;
}

std::int32_t load(Header* h, const std::string& artifact, forward_fn& fn) {
  void* handle = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    write_text(h, std::string("cannot load the compiled candidate: ") + (e ? e : "dlopen failed"));
    return kCannotLoad;
  }
  fn = reinterpret_cast<forward_fn>(::dlsym(handle, "kernelrl_forward"));
  if (!fn) {
    write_text(h, "the compiled candidate exports no `kernelrl_forward` (declare it extern \"C\" and not static)");
    return kNoEntryPoint;
  }
  return kLoaded;
}

std::int32_t call(Header* h, const RunnerHooks& hooks, forward_fn fn, Views& in, Views& params, Views& out) {
  if (!slots_valid(h, hooks)) {
    write_text(h, "the call's tensor slots were changed outside the evaluator");
    return 1;
  }
  build_views(h, hooks, 0, h->n_inputs, in);
  build_views(h, hooks, h->n_inputs, h->n_params, params);
  build_views(h, hooks, h->n_inputs + h->n_params, h->n_outputs, out);
  try {
    const int rc = fn(in.views.data(), h->n_inputs, params.views.data(), h->n_params, out.views.data(), h->n_outputs,
                      hooks.stream);
    if (rc != 0) {
      write_text(h, "kernelrl_forward returned " + std::to_string(rc) + " (non-zero means failure)");
      return 1;
    }
  } catch (const std::exception& e) {
    write_text(h, std::string("kernelrl_forward threw a C++ exception: ") + e.what());
    return 1;
  } catch (...) {
    write_text(h, "kernelrl_forward threw a C++ exception");
    return 1;
  }
  if (hooks.finish) {
    if (const char* failed = hooks.finish(hooks.state)) {
      write_text(h, failed);
      return 1;
    }
  }
  return 0;
}

}  // namespace

void write_text(Header* h, const std::string& s) {
  const std::size_t n = std::min(s.size(), kTextBytes - 1);
  std::memcpy(h->text, s.data(), n);
  h->text[n] = '\0';
}

std::string read_text(const Header* h) { return std::string(h->text, strnlen(h->text, kTextBytes - 1)); }

void write_audit_text(Header* h, const std::string& s) {
  const std::size_t n = s.size() < kAuditTextBytes ? s.size() : 0;  // a record cut short would not parse
  std::memcpy(h->audit_text, s.data(), n);
  h->audit_text[n] = '\0';
}

std::string read_audit_text(const Header* h) {
  return std::string(h->audit_text, strnlen(h->audit_text, kAuditTextBytes - 1));
}

void answer(Header* h, std::uint32_t seq) {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  h->reply.ring(seq);
}

bool wait_for_request(Header* h, std::uint32_t seq, pid_t parent) {
  // Asleep, no spinning: the wake-up's cost is in every timed call and in the idle calls the child
  // subtracts alike, and CPU time this process spends between requests is refused. Not even woken
  // to poll: a wake-up after a long sleep cost 100-500 us of CPU time on the development VM (its
  // honest host fixtures were refused for it); the parent's death ends this process by
  // PR_SET_PDEATHSIG, and the parent is checked once an hour besides.
  return h->command.wait_for(seq, 0us, kParentCheck, [parent] { return ::getppid() == parent; });
}

std::string wait_for_start(Header* h, pid_t parent) {
  if (!wait_for_request(h, 1, parent) || h->op != Op::START) _exit(1);
  return read_text(h);
}

void answer_set_up(Header* h, const std::string& report) {
  write_text(h, report);
  h->rc = 0;
  answer(h, 1);
}

void fail_set_up(Header* h, const std::string& why) {
  write_text(h, why);
  h->rc = -1;
  h->reply.ring(1);
  std::fflush(nullptr);
  _exit(1);
}

void serve(Header* h, pid_t parent, const std::string& artifact, const RunnerHooks& hooks) {
  std::uint32_t seq = 1;
  forward_fn fn = nullptr;
  Views in, params, out;
  for (;;) {
    ++seq;
    if (!wait_for_request(h, seq, parent)) _exit(1);
    switch (h->op) {
      case Op::LOAD:
        h->rc = load(h, artifact, fn);
        break;
      case Op::CALL:
        if (hooks.before_call) hooks.before_call(hooks.state);
        if (hooks.begin_record) hooks.begin_record(hooks.state);
        h->rc = fn ? call(h, hooks, fn, in, params, out) : 1;
        break;
      case Op::RECORD:
        write_audit_text(h, hooks.call_record ? hooks.call_record(hooks.state) : std::string("{}"));
        h->rc = 0;
        break;
      case Op::IDLE:
        if (hooks.before_call) hooks.before_call(hooks.state);
        if (hooks.finish) hooks.finish(hooks.state);  // a broken context is the next call's to report
        h->rc = 0;
        break;
      default:
        std::fflush(nullptr);
        _exit(0);
    }
    answer(h, seq);
  }
}

}  // namespace kernelrl::runner
