// Tests of audit/op_record.hpp through the embedded interpreter with torch imported, as the runner
// calls a kernelbench candidate: Python-level operators, the Python dispatch key excluded, and the
// Python-level switches of RecordFunction (the "KnownGap" tests pass while the gap is there).
#include <gtest/gtest.h>
#include <pybind11/embed.h>

#include <algorithm>
#include <string>
#include <vector>

#include "audit/op_record.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::audit {
namespace {

using Names = std::vector<std::string>;

class OpRecorderPythonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const common::Fallible started = task::start_python();
    ASSERT_TRUE(started.ok()) << started.error().message;
  }

  void SetUp() override {
    auto installed = OpRecorder::install();
    ASSERT_TRUE(installed.ok()) << installed.error().message;
    recorder_ = *installed;
  }

  // Runs `code` inside a call's window, with torch and two 4x4 matrices a and b made before it.
  OpCallRecord call(const std::string& code) {
    py::dict scope;
    scope["torch"] = py::module_::import("torch");
    py::exec("a = torch.ones(4, 4)\nb = torch.ones(4, 4)\n", scope);
    recorder_->begin_call();
    try {
      py::exec(code, scope);
    } catch (const py::error_already_set& e) {
      ADD_FAILURE() << e.what();
    }
    return recorder_->end_call();
  }

  OpRecorder* recorder_ = nullptr;
};

TEST_F(OpRecorderPythonTest, MatmulWithThePythonKeyExcludedIsRefused) {
  // torch 2's _ExcludeDispatchKeyGuard is a context manager; torch 1.13's ExcludeDispatchKeyGuard
  // holds while the object lives.
  const OpCallRecord r = call(
      "ks = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)\n"
      "guard = getattr(torch._C, '_ExcludeDispatchKeyGuard', None)\n"
      "if guard is not None:\n"
      "    with guard(ks):\n"
      "        assert torch._C._dispatch_tls_is_dispatch_key_excluded(torch._C.DispatchKey.Python)\n"
      "        c = torch.matmul(a, b)\n"
      "else:\n"
      "    g = torch._C.ExcludeDispatchKeyGuard(ks)\n"
      "    assert torch._C._dispatch_tls_is_dispatch_key_excluded(torch._C.DispatchKey.Python)\n"
      "    c = torch.matmul(a, b)\n"
      "    del g\n");
  ASSERT_EQ(r.refused.size(), 1u);
  // aten::matmul where it has kernels of its own (torch 1.13: nested-tensor ones), else its aten::mm.
  EXPECT_TRUE(r.refused[0] == "aten::matmul" || r.refused[0] == "aten::mm") << r.refused[0];
  EXPECT_TRUE(r.recording_intact);
}

TEST_F(OpRecorderPythonTest, MmThroughTorchAndThroughTorchOpsIsRefused) {
  const OpCallRecord r = call("c = torch.mm(a, b)\nd = torch.ops.aten.mm.default(a, b)\n");
  EXPECT_EQ(r.refused, Names{"aten::mm"});
  EXPECT_EQ(r.n_refused, 2);
}

TEST_F(OpRecorderPythonTest, AllocatingViewingCopyingAndFillingAreNot) {
  const OpCallRecord r = call(
      "e = torch.empty_like(a)\n"
      "e.copy_(b)\n"
      "v = a.view(-1).clone()\n"
      "z = torch.zeros(3, dtype=torch.float64)\n"
      "t = a.T.contiguous()\n"
      "x = a[0, 1].item()\n"
      "f = a.double().float()\n"
      "s = a.unsqueeze(0).permute(1, 0, 2).reshape(-1)\n"
      "e.fill_(1.0)\n"
      "n = torch.empty(4, 4).new_zeros((2, 2))\n");
  EXPECT_EQ(r.refused, Names{});
  EXPECT_EQ(r.refused_inside_allowed, Names{});
  EXPECT_GE(r.n_ops, 10);
}

TEST_F(OpRecorderPythonTest, RecordFunctionLeftOffFromPythonIsSeenAndSwitchedBackOn) {
  const OpCallRecord off = call("torch.autograd._enable_record_function(False)\nc = torch.mm(a, b)\n");
  EXPECT_EQ(off.refused, Names{});
  EXPECT_FALSE(off.recording_intact);
  const OpCallRecord next = call("c = torch.mm(a, b)\n");
  EXPECT_EQ(next.refused, Names{"aten::mm"});
  EXPECT_TRUE(next.recording_intact);
}

TEST_F(OpRecorderPythonTest, CallbacksClearedFromPythonAreSeenAndAddedAgain) {
  const OpCallRecord cleared = call("torch._C._autograd._clear_callbacks()\nc = torch.mm(a, b)\n");
  EXPECT_EQ(cleared.refused, Names{});
  EXPECT_FALSE(cleared.recording_intact);
  const OpCallRecord next = call("c = torch.mm(a, b)\n");
  EXPECT_EQ(next.refused, Names{"aten::mm"});
}

TEST_F(OpRecorderPythonTest, KnownGapRecordFunctionSwitchedOffAndOnFromPython) {
  const OpCallRecord r = call(
      "torch.autograd._enable_record_function(False)\n"
      "c = torch.mm(a, b)\n"
      "torch.autograd._enable_record_function(True)\n");
  EXPECT_EQ(r.refused, Names{});
  EXPECT_TRUE(r.recording_intact);
}

// OpOverload._op_dk (and torch 2's OpOverload.redispatch) call a kernel for a given dispatch key
// without RecordFunction.
TEST_F(OpRecorderPythonTest, KnownGapCallingAnOperatorForADispatchKey) {
  const OpCallRecord r = call(
      "mm = torch.ops.aten.mm.default\n"
      "c = mm._op_dk(torch._C.DispatchKey.CPU, a, b)\n"
      "if hasattr(mm, 'redispatch'):\n"
      "    d = mm.redispatch(torch._C.DispatchKeySet(torch._C.DispatchKey.CPU), a, b)\n");
  // What the kernel dispatches itself is seen as top-level (torch 1.13's CPU mm: aten::resolve_conj).
  EXPECT_EQ(std::count(r.refused.begin(), r.refused.end(), "aten::mm"), 0);
  EXPECT_TRUE(r.recording_intact);
}

}  // namespace
}  // namespace kernelrl::audit
