// Tests of audit/op_record.hpp with libtorch on the CPU: which operators a call's window reports,
// on which threads, what inside_allowed_op() says inside real kernels, and the ways around the
// recorder that are seen at the call's end and those that are not (the "KnownGap" tests: they pass
// while the gap is there, and fail, to be renamed, the day it closes).
#include "audit/op_record.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <gtest/gtest.h>
#include <torch/library.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kernelrl::audit {
namespace {

using Names = std::vector<std::string>;

OpRecorder& recorder() {
  static OpRecorder* r = [] {
    auto installed = OpRecorder::install();
    if (!installed) {
      ADD_FAILURE() << installed.error().message;
      std::abort();
    }
    return *installed;
  }();
  return *r;
}

at::Tensor matrix() { return at::ones({4, 4}); }

TEST(OpRecorderTest, InstallsOncePerProcess) {
  auto a = OpRecorder::install();
  auto b = OpRecorder::install();
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(OpRecorderTest, MatrixProductInsideTheCallIsRefused) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  const at::Tensor c = at::mm(a, b);
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, Names{"aten::mm"});
  EXPECT_EQ(r.n_refused, 1);
  EXPECT_EQ(r.n_ops, 1);  // what mm dispatches inside is not judged
  EXPECT_TRUE(r.recording_intact);
}

TEST(OpRecorderTest, AllocatingViewingCopyingAndFillingAreNot) {
  recorder().begin_call();
  at::Tensor e = at::empty({8, 8});
  const at::Tensor z = at::zeros({8, 8});
  e.copy_(z);
  at::Tensor c = e.view({64}).clone();
  c.fill_(2.0);
  const at::Tensor t = e.t().contiguous();
  const at::Tensor d = e.to(at::kDouble);
  const at::Tensor s = e.narrow(0, 1, 2).unsqueeze(0).permute({0, 2, 1}).reshape({-1});
  const float x = c[3].item<float>();
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(x, 2.0f);
  EXPECT_EQ(r.refused, Names{});
  EXPECT_EQ(r.n_refused, 0);
  EXPECT_GE(r.n_ops, 15);
  EXPECT_EQ(r.refused_inside_allowed, Names{});
  EXPECT_TRUE(r.recording_intact);
}

TEST(OpRecorderTest, LargeCopiesAndFillsOnTheIntraOpThreadsAreNot) {
  const at::Tensor big = at::ones({1 << 22});
  recorder().begin_call();
  at::Tensor c = big.clone();
  c.fill_(3.0);
  c.copy_(big);
  const at::Tensor d = big.to(at::kDouble);
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, Names{});
  EXPECT_EQ(r.refused_inside_allowed, Names{});
}

TEST(OpRecorderTest, ExcludingThePythonKeyDoesNotHideAnOperator) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  {
    c10::impl::ExcludeDispatchKeyGuard no_python(c10::DispatchKey::Python);
    const at::Tensor c = at::mm(a, b);
  }
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, Names{"aten::mm"});
}

TEST(OpRecorderTest, OperatorsOutsideTheCallAreNotReported) {
  const at::Tensor a = matrix(), b = matrix();
  at::Tensor before = at::mm(a, b);
  recorder().begin_call();
  const at::Tensor z = at::zeros({2});
  const OpCallRecord r = recorder().end_call();
  at::Tensor after = at::mm(a, b);
  EXPECT_EQ(r.refused, Names{});
  EXPECT_EQ(r.n_ops, 1);
  recorder().begin_call();
  const OpCallRecord empty = recorder().end_call();
  EXPECT_EQ(empty.n_ops, 0);
  EXPECT_EQ(empty.refused, Names{});
}

TEST(OpRecorderTest, AnOperatorOnAnotherThreadDuringTheCallIsReported) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  std::thread([&] { const at::Tensor c = at::mm(a, b); }).join();
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, Names{"aten::mm"});
  EXPECT_TRUE(r.recording_intact);
}

TEST(OpRecorderTest, RefusedNamesAreListedOnceInOrderAtMostEight) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  for (int i = 0; i < 2; ++i) (void)at::mm(a, b);
  (void)a.add(b), (void)a.mul(b), (void)a.sub(b), (void)a.div(b), (void)a.neg(), (void)a.exp(), (void)a.abs(),
      (void)a.sin(), (void)a.cos();
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, (Names{"aten::mm", "aten::add", "aten::mul", "aten::sub", "aten::div", "aten::neg",
                              "aten::exp", "aten::abs"}));
  EXPECT_EQ(r.n_refused, 11);
  EXPECT_EQ(r.n_ops, 11);
}

TEST(OpRecorderTest, CompositeOperatorsAreJudgedByWhatTheyDispatch) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  const at::Tensor t = a.numpy_T();               // aten::permute
  const at::Tensor u = a.type_as(b);              // aten::to
  const at::Tensor w = a.broadcast_to({2, 4, 4});  // aten::expand
  const OpCallRecord allowed = recorder().end_call();
  EXPECT_EQ(allowed.refused, Names{});
  EXPECT_EQ(allowed.n_ops, 3);

  recorder().begin_call();
  const at::Tensor p = a.matmul(b);  // has nested-tensor kernels of its own: judged by its name
  const OpCallRecord matmul = recorder().end_call();
  EXPECT_EQ(matmul.refused, Names{"aten::matmul"});

  const at::Tensor image = at::ones({1, 1, 5, 5}), kernel = at::ones({1, 1, 3, 3});
  recorder().begin_call();
  const at::Tensor y = at::conv2d(image, kernel);
  const OpCallRecord conv = recorder().end_call();
  EXPECT_EQ(conv.refused, Names{"aten::convolution"});
}

// inside_allowed_op() as seen from where a nested operator starts: a thread-local callback, which
// runs after the recorder's global one.
struct Sample {
  std::string name;
  bool inside_allowed;
};
thread_local std::vector<Sample>* t_samples = nullptr;

std::unique_ptr<at::ObserverContext> sample(const at::RecordFunction& fn) {
  if (t_samples) t_samples->push_back({fn.name(), OpRecorder::inside_allowed_op()});
  return nullptr;
}

std::vector<Sample> samples_of(const std::function<void()>& work) {
  std::vector<Sample> samples;
  t_samples = &samples;
  const at::CallbackHandle h =
      at::addThreadLocalCallback(at::RecordFunctionCallback(sample).scopes({at::RecordScope::FUNCTION}));
  work();
  at::removeCallback(h);
  t_samples = nullptr;
  return samples;
}

TEST(OpRecorderTest, InsideAnAllowedOperatorItsNestedOperatorsSeeInsideAllowed) {
  (void)recorder();
  EXPECT_FALSE(OpRecorder::inside_allowed_op());
  const std::vector<Sample> samples = samples_of([] { (void)at::zeros({4}); });
  ASSERT_GE(samples.size(), 2u);  // aten::zeros, then its aten::empty and aten::zero_
  EXPECT_EQ(samples.front().name, "aten::zeros");
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_TRUE(samples[i].inside_allowed) << samples[i].name;
  EXPECT_FALSE(OpRecorder::inside_allowed_op());
}

// A candidate's own operator (TORCH_LIBRARY in its extension): refused, as the dispatch-mode audit
// refuses it; its kernel, and what that kernel dispatches, are not inside an allowed operator.
bool g_probe_inside_allowed = true;

at::Tensor probe_kernel(const at::Tensor& x) {
  g_probe_inside_allowed = OpRecorder::inside_allowed_op();
  return x.clone();
}

TEST(OpRecorderTest, ACandidatesOwnOperatorIsRefusedAndNotInsideAllowed) {
  torch::Library def(torch::Library::DEF, "kernelrl_test", c10::nullopt, __FILE__, __LINE__);
  def.def("probe(Tensor x) -> Tensor");
  torch::Library impl(torch::Library::IMPL, "kernelrl_test", c10::DispatchKey::CPU, __FILE__, __LINE__);
  impl.impl("probe", &probe_kernel);
  const auto probe =
      c10::Dispatcher::singleton().findSchemaOrThrow("kernelrl_test::probe", "").typed<at::Tensor(const at::Tensor&)>();
  const at::Tensor a = matrix();
  std::vector<Sample> samples;
  recorder().begin_call();
  samples = samples_of([&] { (void)probe.call(a); });
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, Names{"kernelrl_test::probe"});
  EXPECT_FALSE(g_probe_inside_allowed);
  for (const Sample& s : samples) EXPECT_FALSE(s.inside_allowed) << s.name;  // clone inside probe too
}

// A kernel registered over an allowed operator (here aten::zero_ at a mode key of torch's own
// tests) runs inside it: it sees inside_allowed_op(), and a refused operator it dispatches is not
// judged but listed in refused_inside_allowed.
bool g_zero_inside_allowed = false;
bool g_zero_inside_allowed_after_mm = false;

at::Tensor& zero_over_mm(at::Tensor& self) {
  g_zero_inside_allowed = OpRecorder::inside_allowed_op();
  c10::impl::ExcludeDispatchKeyGuard no_mode(c10::DispatchKey::TESTING_ONLY_GenericMode);
  (void)at::mm(self, self);
  g_zero_inside_allowed_after_mm = OpRecorder::inside_allowed_op();
  return self.zero_();
}

TEST(OpRecorderTest, KnownGapAKernelOverAnAllowedOperatorHidesWhatItDispatches) {
  torch::Library impl(torch::Library::IMPL, "aten", c10::DispatchKey::TESTING_ONLY_GenericMode, __FILE__, __LINE__);
  impl.impl("zero_", &zero_over_mm);
  at::Tensor m = matrix();
  recorder().begin_call();
  {
    c10::impl::IncludeDispatchKeyGuard mode(c10::DispatchKey::TESTING_ONLY_GenericMode);
    m.zero_();
  }
  const OpCallRecord r = recorder().end_call();
  EXPECT_TRUE(g_zero_inside_allowed);
  EXPECT_TRUE(g_zero_inside_allowed_after_mm);
  EXPECT_EQ(r.refused, Names{});
  EXPECT_EQ(r.refused_inside_allowed, Names{"aten::mm"});
  EXPECT_EQ(m.sum().item<float>(), 0.0f);
}

// The ways to switch RecordFunction off: left off at the call's end, each is seen and undone.
TEST(OpRecorderTest, RecordFunctionLeftOffOnTheThreadIsSeenAndSwitchedBackOn) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  at::enableRecordFunction(false);
  (void)at::mm(a, b);
  const OpCallRecord off = recorder().end_call();
  EXPECT_EQ(off.refused, Names{});
  EXPECT_FALSE(off.recording_intact);
  EXPECT_TRUE(at::isRecordFunctionEnabled());
  recorder().begin_call();
  (void)at::mm(a, b);
  const OpCallRecord next = recorder().end_call();
  EXPECT_EQ(next.refused, Names{"aten::mm"});
  EXPECT_TRUE(next.recording_intact);
}

TEST(OpRecorderTest, ClearedCallbacksAreSeenAndAddedAgain) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  at::clearCallbacks();
  (void)at::mm(a, b);
  const OpCallRecord cleared = recorder().end_call();
  EXPECT_EQ(cleared.refused, Names{});
  EXPECT_FALSE(cleared.recording_intact);
  recorder().begin_call();
  std::thread([&] { (void)at::mm(a, b); }).join();
  const OpCallRecord next = recorder().end_call();
  EXPECT_EQ(next.refused, Names{"aten::mm"});
  EXPECT_TRUE(next.recording_intact);
}

TEST(OpRecorderTest, DisabledCallbacksAreSeenAndEnabledAgain) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  for (at::CallbackHandle h = 1; h < 16; ++h) at::disableCallback(h);  // handles are consecutive
  (void)at::mm(a, b);
  const OpCallRecord disabled = recorder().end_call();
  EXPECT_EQ(disabled.refused, Names{});
  EXPECT_FALSE(disabled.recording_intact);
  recorder().begin_call();
  (void)at::mm(a, b);
  const OpCallRecord next = recorder().end_call();
  EXPECT_EQ(next.refused, Names{"aten::mm"});
  EXPECT_TRUE(next.recording_intact);
}

TEST(OpRecorderTest, AnOperatorLeftOpenIsSeenAndForgotten) {
  const at::Tensor a = matrix(), b = matrix();
  const c10::FunctionSchema& zeros = c10::Dispatcher::singleton().findSchemaOrThrow("aten::zeros", "").schema();
  recorder().begin_call();
  auto fake = std::make_unique<at::RecordFunction>(at::RecordScope::FUNCTION);
  fake->before(std::cref(zeros));
  (void)at::mm(a, b);  // "inside aten::zeros"
  const OpCallRecord open = recorder().end_call();
  EXPECT_EQ(open.refused, Names{});
  EXPECT_EQ(open.refused_inside_allowed, Names{"aten::mm"});
  EXPECT_FALSE(open.recording_intact);
  recorder().begin_call();
  (void)at::mm(a, b);
  fake.reset();  // its end, inside the next call, matches nothing
  const OpCallRecord next = recorder().end_call();
  EXPECT_EQ(next.refused, Names{"aten::mm"});
  EXPECT_TRUE(next.recording_intact);
}

TEST(OpRecorderTest, KnownGapRecordFunctionSwitchedOffAndOnInsideTheCall) {
  const at::Tensor a = matrix(), b = matrix();
  recorder().begin_call();
  {
    at::DisableRecordFunctionGuard off;
    (void)at::mm(a, b);
  }
  const OpCallRecord r = recorder().end_call();
  EXPECT_EQ(r.refused, Names{});
  EXPECT_TRUE(r.recording_intact);
}

TEST(OpRecorderTest, KnownGapRedispatchRunsNoRecordFunction) {
  const at::Tensor a = matrix(), b = matrix();
  const auto mm = c10::Dispatcher::singleton()
                      .findSchemaOrThrow("aten::mm", "")
                      .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  recorder().begin_call();
  const at::Tensor c = mm.redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), a, b);
  const OpCallRecord r = recorder().end_call();
  // What the kernel dispatches itself is seen as top-level (torch 1.13's CPU mm: aten::resolve_conj).
  EXPECT_EQ(std::count(r.refused.begin(), r.refused.end(), "aten::mm"), 0);
  EXPECT_EQ(c.sum().item<float>(), 64.0f);
}

}  // namespace
}  // namespace kernelrl::audit
