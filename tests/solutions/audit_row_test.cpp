// A row of `kernelrl audit`'s table from the three records of a solution: own kernels and
// fallbacks read from the observe run's record of every call, claims judged, the summary counted,
// the page escaped.
#include <gtest/gtest.h>

#include "solutions/audit_render.hpp"
#include "solutions/audit_row.hpp"

namespace kernelrl::solutions {
namespace {

using nlohmann::json;

const std::string kTryCode = "class ModelNew:\n    def forward(self, x):\n        try:\n            return k(x)\n        except Exception:\n            return x\n";
const std::string kPlainCode = "class ModelNew:\n    def forward(self, x):\n        return k(x)  # try: in a comment\n";

json record(const std::string& status, double speedup = 0, json calls = json(), const std::string& message = "") {
  json r = {{"status", status}, {"speedup", speedup}};
  if (!message.empty()) r["error"] = {{"message", message}};
  if (!calls.is_null()) r["isolation"] = {{"candidate_process", {{"calls", calls}}}};
  return r;
}

json gpu_calls(int n, int own, int refused = 0) {
  return {{"calls", n}, {"records", n}, {"ops_intact", true}, {"with_refused_ops", refused}, {"launches_intact", true},
          {"with_own_kernels", own}, {"without_own_kernels", n - own}, {"with_foreign_kernels", n - own}};
}

json cpu_calls(int n, int refused) {
  return {{"calls", n}, {"records", n}, {"ops_intact", true}, {"with_refused_ops", refused}};
}

Solution solution(const std::string& code, std::optional<double> claim) { return {"s", 1, 1, code, claim, "set:1"}; }

const json kTryRefused = record("REJECTED", 0, json(), "try/except is not allowed: a fallback ...");

TEST(AuditRow, AFallbackThatNeverRanOnAGpuAndAClaimThatHolds) {
  const AuditRow r = audit_row(solution(kTryCode, 2.0), "level1/001_x.py", "", kTryRefused, kTryRefused,
                               record("OK", 1.9, gpu_calls(120, 120)), 0.1);
  EXPECT_TRUE(r.has_fallback);
  EXPECT_EQ(r.strict.status, "REJECTED");
  EXPECT_NE(r.strict.reason.find("try/except"), std::string::npos);
  EXPECT_EQ(r.own_kernel, "every call (120)");
  EXPECT_TRUE(r.own_kernel_every_call);
  EXPECT_EQ(r.fallback, "never ran");
  EXPECT_FALSE(r.fallback_ran);
  EXPECT_EQ(r.claim, "holds") << "1.9x is within 10% of 2.0x";
  EXPECT_TRUE(r.claim_holds);
}

TEST(AuditRow, AFallbackThatRanAndClaimsThatDoNotHold) {
  const AuditRow ran = audit_row(solution(kTryCode, 1.5), "t", "", kTryRefused, kTryRefused,
                                 record("OK", 1.6, gpu_calls(100, 70)), 0.1);
  EXPECT_EQ(ran.fallback, "ran in 30 of 100 calls");
  EXPECT_EQ(ran.own_kernel, "70 of 100 calls");
  EXPECT_EQ(ran.claim, "does not hold: its fallback ran");
  const AuditRow slow = audit_row(solution(kPlainCode, 3.0), "t", "", record("OK", 1.0), record("OK", 1.0),
                                  record("OK", 1.2, gpu_calls(10, 10)), 0.1);
  EXPECT_FALSE(slow.has_fallback) << "a try in a comment is no fallback";
  EXPECT_EQ(slow.fallback, "none written");
  EXPECT_EQ(slow.claim, "does not hold: 1.20x measured");
  const AuditRow wrong = audit_row(solution(kPlainCode, 3.0), "t", "", record("WRONG_OUTPUT"), record("WRONG_OUTPUT"),
                                   record("WRONG_OUTPUT", 0, gpu_calls(5, 5)), 0.1);
  EXPECT_EQ(wrong.claim, "does not hold: WRONG_OUTPUT");
  const AuditRow torch_only = audit_row(solution(kPlainCode, 1.0), "t", "", record("OK", 1.0), record("OK", 1.0),
                                        record("OK", 1.0, gpu_calls(10, 0, 10)), 0.1);
  EXPECT_EQ(torch_only.own_kernel, "none (0 of 10)");
  EXPECT_EQ(torch_only.claim, "does not hold: own kernel in none (0 of 10)");
}

// A fallback that ran in calls where its own kernel also ran (a launch that succeeded, then a
// failure after it): PyTorch computed in those calls only. (Until n_own_failed, a refused launch
// counted as an own kernel and the parity corpus's try_fallback_sometimes read so on an H100: 37
// of 112 calls.)
TEST(AuditRow, CallsWhereOnlySomeRanPytorchRanTheFallback) {
  const AuditRow some = audit_row(solution(kTryCode, std::nullopt), "t", "", kTryRefused, kTryRefused,
                                  record("OK", 0.6, gpu_calls(112, 112, 37)), 0.1);
  EXPECT_EQ(some.fallback, "ran in 37 of 112 calls");
  EXPECT_TRUE(some.fallback_ran);
  const AuditRow every = audit_row(solution(kTryCode, 1.0), "t", "", kTryRefused, kTryRefused,
                                   record("OK", 1.2, gpu_calls(50, 50, 50)), 0.1);
  EXPECT_EQ(every.fallback, "cannot tell: PyTorch computed in every call");
  EXPECT_FALSE(every.fallback_ran);
  EXPECT_EQ(every.claim, "holds");
}

TEST(AuditRow, OnTheCpuOnlyPytorchComputeIsRecorded) {
  const AuditRow never = audit_row(solution(kTryCode, std::nullopt), "t", "", kTryRefused, kTryRefused,
                                   record("OK", 0.8, cpu_calls(40, 0)), 0.1);
  EXPECT_EQ(never.own_kernel, "not recorded on the CPU");
  EXPECT_EQ(never.fallback, "never ran");
  EXPECT_EQ(never.claim, "no claim");
  const AuditRow ran = audit_row(solution(kTryCode, 1.0), "t", "", kTryRefused, kTryRefused,
                                 record("OK", 1.0, cpu_calls(40, 40)), 0.1);
  EXPECT_EQ(ran.fallback, "ran in 40 of 40 calls (PyTorch compute)");
  EXPECT_EQ(ran.claim, "does not hold: its fallback ran");
}

TEST(AuditRow, SolutionsNotEvaluatedSayWhy) {
  const AuditRow none = audit_row(solution("", 1.2), "", "", json(), json(), json(), 0.1);
  EXPECT_EQ(none.not_evaluated, "no solution published");
  EXPECT_EQ(none.claim, "not evaluated");
  const AuditRow no_task = audit_row(solution(kPlainCode, std::nullopt), "", "no task in tasks is level 1 task number 1",
                                     json(), json(), json(), 0.1);
  EXPECT_EQ(no_task.not_evaluated, "no task in tasks is level 1 task number 1");
  const AuditRow broken = audit_row(solution(kPlainCode, std::nullopt), "t", "",
                                    json{{"could_not_evaluate", "the task failed"}}, json(), json(), 0.1);
  EXPECT_EQ(broken.strict.status, "could not evaluate");
  EXPECT_EQ(broken.own_kernel, "-");
  const AuditRow unmeasured = audit_row(solution(kPlainCode, 2.0), "t", "", json(), json(), json(), 0.1);
  EXPECT_EQ(unmeasured.claim, "not measured") << "an audit stopped before its observe run is no verdict on the claim";
}

TEST(AuditSummary, CountsVerdictsEvidenceAndClaims) {
  std::vector<AuditRow> rows = {
      audit_row(solution(kTryCode, 2.0), "t", "", kTryRefused, kTryRefused, record("OK", 2.0, gpu_calls(10, 10)), 0.1),
      audit_row(solution(kTryCode, 1.0), "t", "", kTryRefused, kTryRefused, record("OK", 1.5, gpu_calls(10, 0)), 0.1),
      audit_row(solution(kPlainCode, 4.0), "t", "", record("OK", 1.0), record("OK", 1.0), record("OK", 1.0, gpu_calls(10, 10)), 0.1),
      audit_row(solution("", 1.0), "", "", json(), json(), json(), 0.1)};
  const json s = audit_summary(rows);
  EXPECT_EQ(s["solutions"], 4);
  EXPECT_EQ(s["evaluated"], 3);
  EXPECT_EQ(s["statuses"]["strict"]["REJECTED"], 2);
  EXPECT_EQ(s["statuses"]["strict"]["OK"], 1);
  EXPECT_EQ(s["statuses"]["not evaluated"]["no solution published"], 1);
  EXPECT_EQ(s["own_kernel_every_call"], 2);
  EXPECT_EQ(s["fallback_written"], 2);
  EXPECT_EQ(s["fallback_ran"], 1);
  EXPECT_EQ(s["fallback_never_ran"], 1);
  EXPECT_EQ(s["claims"], 3);
  EXPECT_EQ(s["claims_hold"], 1);
  EXPECT_EQ(s["claims_not_measured"], 1);
  EXPECT_DOUBLE_EQ(s["median_measured_over_claimed"].get<double>(), 1.0);  // of 1.0, 1.5, 0.25
  const std::string text = render_audit_text(rows, s);
  EXPECT_NE(text.find("claims: 1 of 3 measured hold"), std::string::npos) << text;
  rows[0].name = "<script>alert(1)</script>";
  const std::string html = render_audit_html(rows, s);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::solutions
