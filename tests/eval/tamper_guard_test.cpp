// eval/tamper_guard: what a kernelbench candidate's Python may not change in the interpreter it
// shares with the reference, proved both ways: torch's own lazy set-up and the evaluator's operator
// audit (a dispatch mode entered and left) are not changes once settle_torch_lazy_state() ran; a
// replaced torch function, a global module hook and a mode left active are, each named.
#include "eval/tamper_guard.hpp"

#include <gtest/gtest.h>

#include <pybind11/embed.h>
#include <pybind11/eval.h>

#include "task/python_runtime.hpp"

namespace kernelrl::eval {
namespace {

namespace py = pybind11;

class TamperGuardTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = task::start_python();
    ASSERT_TRUE(started) << started.error().message;
  }
  static void run(const char* code) {
    py::dict scope;
    scope["torch"] = py::module_::import("torch");
    py::exec(code, scope);
  }
};

TEST_F(TamperGuardTest, TorchsLazySetUpAndTheAuditsOwnModeAreNotChanges) {
  settle_torch_lazy_state();
  TamperGuard guard{py::none(), py::none()};
  // What every honest kernelbench evaluation does after the snapshot: the operator audit's mode
  // around a call (on torch >= 2 its first use imports torch._dynamo, which wraps manual_seed).
  run(R"(
from torch.utils._python_dispatch import TorchDispatchMode
class Audit(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
with Audit():
    torch.ones(3).mul(2)
)");
  EXPECT_EQ(guard.first_change(), "");
}

TEST_F(TamperGuardTest, AReplacedTorchFunctionIsNamed) {
  TamperGuard guard{py::none(), py::none()};
  run("torch._kernelrl_saved = torch.softmax\ntorch.softmax = lambda *a, **k: a[0]\n");
  EXPECT_EQ(guard.first_change(), "torch.softmax was replaced");
  run("torch.softmax = torch._kernelrl_saved\n");
  EXPECT_EQ(guard.first_change(), "");
}

TEST_F(TamperGuardTest, GlobalModuleHooksAreNamed) {
  TamperGuard guard{py::none(), py::none()};
  run("torch._kernelrl_hook = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: i[0])\n");
  const std::string change = guard.first_change();
  EXPECT_NE(change.find("a global module hook is registered"), std::string::npos) << change;
  EXPECT_NE(change.find("_global_forward_hooks"), std::string::npos) << change;
  run("torch._kernelrl_hook.remove()\n");
  EXPECT_EQ(guard.first_change(), "");
}

TEST_F(TamperGuardTest, AFunctionModeLeftActiveIsNamed) {
  TamperGuard guard{py::none(), py::none()};
  run(R"(
from torch.overrides import TorchFunctionMode
class Rewrite(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
torch._kernelrl_mode = Rewrite()
torch._kernelrl_mode.__enter__()
)");
  EXPECT_EQ(guard.first_change(), "a torch function mode is active");
  run("torch._kernelrl_mode.__exit__(None, None, None)\n");
  EXPECT_EQ(guard.first_change(), "");
}

}  // namespace
}  // namespace kernelrl::eval
