// The device screen must count exactly the elements the host checker rejects, for every dtype and
// every corner (NaN, inf, tolerance edge, poisoned bool bytes); here both run on CPU tensors.
#include "eval/device_screen.hpp"

#include <gtest/gtest.h>
#include <pybind11/embed.h>

#include <cmath>
#include <string>

#include "eval/checker.hpp"
#include "eval/torch_tensors.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::eval {
namespace {

class DeviceScreenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = task::start_python();
    ASSERT_TRUE(s) << s.error().message;
  }

  // Runs Python code defining `a` and `e`; returns {screen count, host checker count}.
  static std::pair<std::int64_t, std::int64_t> both(const std::string& code, Tolerance tol) {
    py::dict scope;
    scope["torch"] = py::module_::import("torch");
    py::exec(code, scope);
    py::object a = scope["a"], e = scope["e"];
    DType dtype = *parse_dtype(dtype_name(e));
    std::int64_t screen = count_mismatches(a, e, dtype, tol);
    HostTensor ha = host_view(a), he = host_view(e);
    CompareResult host = compare_buffers(ha.data, he.data, he.numel, dtype, tol);
    return {screen, host.n_mismatch};
  }
};

TEST_F(DeviceScreenTest, AgreesWithTheHostCheckerOnFloatCorners) {
  const Tolerance tol{1e-2, 1e-2};
  const char* cases[] = {
      "e = torch.randn(1000); a = e.clone()",
      "e = torch.randn(1000); a = e + 0.005",
      "e = torch.randn(1000); a = e.clone(); a[17] += 1.0",
      "e = torch.randn(1000); a = e.clone(); a[3] = float('nan')",
      "e = torch.randn(1000); e[5] = float('nan'); a = e.clone()",
      "e = torch.randn(1000); e[5] = float('inf'); a = e.clone()",
      "e = torch.randn(1000); e[5] = float('inf'); a = e.clone(); a[5] = -float('inf')",
      "e = torch.randn(1000); e[5] = float('inf'); a = e.clone(); a[5] = 1e30",
      "e = torch.randn(1000); a = e.clone(); a[9] = float('inf')",
      "e = torch.full((1000,), float('nan')); a = torch.randn(1000)",
      "e = torch.zeros(64); a = torch.full((64,), 0.01)",          // exactly on atol
      "e = torch.zeros(64); a = torch.full((64,), 0.0100001)",     // just past it
      "e = torch.randn(256).half(); a = (e.float() * 1.02).half()",
      "e = torch.randn(256).bfloat16(); a = (e.float() + 0.03).bfloat16()",
      "e = torch.randn(256).double(); a = e + 1e-3",
  };
  for (const char* code : cases) {
    auto [screen, host] = both(code, tol);
    EXPECT_EQ(screen, host) << code;
  }
  auto [s, h] = both("e = torch.randn(1000); a = e.clone(); a[17] += 1.0", tol);
  EXPECT_EQ(s, 1);  // and the pair can fail
  EXPECT_EQ(h, 1);
}

TEST_F(DeviceScreenTest, AgreesOnIntegersAndPoisonedBools) {
  const Tolerance exact{0, 0};
  const char* cases[] = {
      "e = torch.arange(100); a = e.clone(); a[7] += 1",
      "e = torch.arange(100, dtype=torch.int32); a = e.clone()",
      "e = torch.rand(100) > 0.5; a = e.clone()",
      "e = torch.rand(100) > 0.5; a = ~e",
      "e = torch.rand(100) > 0.5; a = e.clone(); a.view(torch.uint8)[4] = 0xAB",
  };
  for (const char* code : cases) {
    auto [screen, host] = both(code, exact);
    EXPECT_EQ(screen, host) << code;
  }
}

}  // namespace
}  // namespace kernelrl::eval
