#include "runner/protocol.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

namespace kernelrl::runner {

namespace {

using namespace std::chrono_literals;

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

void begin_forked_runner(sandbox::SharedPages& pages, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(1);
  pages.drop_descriptor();
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
}

std::string wait_for_start(Header* h, pid_t parent) {
  if (!wait_for_request(h, 1, Op::EXIT, parent) || h->op != Op::START) _exit(1);
  return read_text(h);
}

void answer_set_up(Header* h, const std::string& report) {
  write_text(h, report);
  h->rc = 0;
  h->reply.ring(1);
}

void fail_set_up(Header* h, const std::string& why) {
  write_text(h, why);
  h->rc = -1;
  h->reply.ring(1);
  std::fflush(nullptr);
  _exit(1);
}

bool wait_for_request(Header* h, std::uint32_t seq, Op last, pid_t parent) {
  // After an ARM the next request is a timed call: spin for it, so its start costs no wake-up.
  // After a call, spin too: in timing the reference's call comes next, in the child, which spins
  // through the candidate's call; so each is timed while the other process spins (a busy
  // neighbour core slows a core by 10-20% on a VM), and the ratio stays fair.
  const auto spin = last == Op::ARM ? 200ms : last == Op::CALL || last == Op::IDLE || last == Op::PING ? 50ms : 0ms;
  return h->command.wait_for(seq, spin, 1000ms, [parent] { return ::getppid() == parent; });
}

void serve(Header* h, pid_t parent, const std::string& artifact, const RunnerHooks& hooks) {
  std::uint32_t seq = 1;
  forward_fn fn = nullptr;
  Views in, params, out;
  Op last = Op::LOAD;
  for (;;) {
    ++seq;
    if (!wait_for_request(h, seq, last, parent)) _exit(1);
    last = h->op;
    switch (h->op) {
      case Op::LOAD:
        h->rc = load(h, artifact, fn);
        break;
      case Op::ARM:
        if (h->flush_caches && hooks.flush) hooks.flush(hooks.state);
        h->rc = 0;
        break;
      case Op::CALL:
        h->rc = fn ? call(h, hooks, fn, in, params, out) : 1;
        break;
      case Op::IDLE:
        if (hooks.finish) hooks.finish(hooks.state);  // a broken context is the next call's to report
        h->rc = 0;
        break;
      case Op::PING:  // leaves rc and text to the call before it
        break;
      default:
        _exit(0);
    }
    h->reply.ring(seq);
  }
}

}  // namespace kernelrl::runner
