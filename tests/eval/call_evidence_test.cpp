// What a candidate's calls ran, tallied from its process's records: calls with PyTorch compute,
// calls with and without a kernel of its own (a GPU record), records missing or switched off.
#include <gtest/gtest.h>

#include "eval/call_evidence.hpp"

namespace kernelrl::eval {
namespace {

using nlohmann::json;

json cpu_call(json refused) { return {{"ops", {{"intact", true}, {"refused", refused}}}}; }

json gpu_call(int own, int foreign, int graphs = 0, bool intact = true, int own_failed = 0) {
  return {{"ops", {{"intact", true}, {"refused", json::array()}}},
          {"launches", {{"n_own", own}, {"n_own_failed", own_failed}, {"n_foreign", foreign}, {"n_graph_launches", graphs}, {"audit_intact", intact},
                        {"foreign_kernels", foreign ? json::array({"ampere_sgemm"}) : json::array()}}}};
}

TEST(CallEvidence, CountsTheCallsThatRanPytorchComputeOnTheCpu) {
  CallEvidence e;
  e.add(cpu_call(json::array()));
  e.add(cpu_call({"aten::relu"}));
  e.add(cpu_call({"aten::relu", "aten::add"}));
  const json j = e.to_json();
  EXPECT_EQ(j["calls"], 3);
  EXPECT_EQ(j["records"], 3);
  EXPECT_EQ(j["with_refused_ops"], 2);
  EXPECT_EQ(j["refused_ops"], json::array({"aten::relu", "aten::add"}));
  EXPECT_TRUE(j["ops_intact"]);
  EXPECT_FALSE(j.contains("with_own_kernels")) << "no launch record on the CPU: nothing said of own kernels";
}

TEST(CallEvidence, TellsCallsWithAndWithoutOwnKernelsApartOnAGpu) {
  CallEvidence e;
  e.add(gpu_call(2, 0));
  e.add(gpu_call(0, 0, 1));  // a graph of judged kernels replayed
  e.add(gpu_call(0, 3));     // the fallback: PyTorch's kernels only
  const json j = e.to_json();
  EXPECT_EQ(j["with_own_kernels"], 2);
  EXPECT_EQ(j["without_own_kernels"], 1);
  EXPECT_EQ(j["with_foreign_kernels"], 1);
  EXPECT_EQ(j["foreign_kernels"], json::array({"ampere_sgemm"}));
  EXPECT_TRUE(j["launches_intact"]);
}

// A launch the driver refused (a block too large: the trigger of many try/except fallbacks) ran
// nothing: a call whose own launches all failed is a call without an own kernel.
TEST(CallEvidence, ARefusedOwnLaunchIsNoOwnKernel) {
  CallEvidence e;
  e.add(gpu_call(1, 0));
  e.add(gpu_call(1, 2, 0, true, 1));  // refused, then PyTorch's kernel
  e.add(gpu_call(2, 0, 0, true, 1));  // one refused, one ran
  const json j = e.to_json();
  EXPECT_EQ(j["with_own_kernels"], 2);
  EXPECT_EQ(j["without_own_kernels"], 1);
}

TEST(CallEvidence, AMissingOrSwitchedOffRecordIsSaid) {
  CallEvidence e;
  e.add(gpu_call(1, 0, 0, false));
  e.add(json("overwritten"));
  const json j = e.to_json();
  EXPECT_EQ(j["calls"], 2);
  EXPECT_EQ(j["records"], 1);
  EXPECT_FALSE(j["launches_intact"]);
  CallEvidence native;  // a native candidate's runner records launches only
  native.add(json{{"launches", gpu_call(1, 0)["launches"]}});
  EXPECT_FALSE(native.to_json().contains("ops_intact"));
  EXPECT_EQ(native.to_json()["with_own_kernels"], 1);
  CallEvidence host;  // a host candidate's runner records nothing
  host.add(json());
  EXPECT_FALSE(host.any_record());
}

}  // namespace
}  // namespace kernelrl::eval
