// The device screen must count exactly the elements the host checker rejects, for every dtype and
// every corner (NaN, inf, tolerance edge, poisoned bool bytes), and give its relative L2 error.
// Built twice: eval_device_screen_test screens CPU tensors (torch's operators), and
// eval_device_screen_gpu_test (label gpu, KERNELRL_SCREEN_ON_CUDA) moves them to the GPU first, where
// the engine's own kernels screen them when built (device_check_kernels.hpp).
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
    HostTensor ha = host_view(a), he = host_view(e);
    CompareResult host = compare_buffers(ha.data, he.data, he.numel, dtype, tol);
    if (on_cuda()) {
      a = a.attr("cuda")();
      e = e.attr("cuda")();
    }
    Screen screen = screen_outputs(a, e, dtype, tol);
    if (is_floating(dtype)) {
      EXPECT_NEAR(screen.relative_l2, host.relative_l2_error(), 1e-9) << code;
    }
    if (dtype != DType::BOOL) {  // a bool clone normalises the 0xAB poison
      EXPECT_TRUE(bytes_equal(a, a.attr("clone")())) << code;
    }
    return {screen.n_mismatch, host.n_mismatch};
  }

  static bool on_cuda() {
#ifdef KERNELRL_SCREEN_ON_CUDA
    return true;
#else
    return false;
#endif
  }

  void SetUp() override {
    if (on_cuda() && !py::module_::import("torch").attr("cuda").attr("is_available")().cast<bool>()) {
      GTEST_SKIP() << "no GPU visible to torch";
    }
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
  // Large enough for every block of the grid and a tail: the sums must not lose a block's share.
  auto [big_s, big_h] = both("e = torch.randn(3_000_017); a = e + 0.005; a[123_457] = 5.0; a[2_999_999] = float('nan')", tol);
  EXPECT_EQ(big_s, 2);
  EXPECT_EQ(big_h, 2);
}

TEST_F(DeviceScreenTest, BytesEqualSeesOneChangedByteAnywhere) {
  py::dict scope;
  scope["torch"] = py::module_::import("torch");
  // 16-byte aligned and not (a view one element in), with a tail of odd bytes.
  py::exec("base = torch.randint(0, 255, (1_000_003,), dtype=torch.uint8)", scope);
  if (on_cuda()) py::exec("base = base.cuda()", scope);
  for (const char* slice : {"0", "1"}) {
    py::object a = py::eval(std::string("base[") + slice + ":]", scope);
    py::object b = a.attr("clone")();
    EXPECT_TRUE(bytes_equal(a, b));
    for (std::int64_t at : {std::int64_t{0}, std::int64_t{500'000}, a.attr("numel")().cast<std::int64_t>() - 1}) {
      py::object c = b.attr("clone")();
      c.attr("__setitem__")(at, (c.attr("__getitem__")(at).attr("item")().cast<int>() + 1) % 256);
      EXPECT_FALSE(bytes_equal(a, c)) << "offset " << slice << ", byte " << at;
    }
  }
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
