#include "sandbox/seccomp_rules.hpp"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace kernelrl::sandbox::seccomp {

namespace {

constexpr std::uint32_t kNr = offsetof(struct seccomp_data, nr);
constexpr std::uint32_t kArch = offsetof(struct seccomp_data, arch);

// x86-64 is little-endian: an argument's low half comes first.
std::uint32_t arg_low(int arg) { return static_cast<std::uint32_t>(offsetof(struct seccomp_data, args) + 8 * arg); }
std::uint32_t arg_high(int arg) { return arg_low(arg) + 4; }

std::uint32_t ret_value(Action action) {
  switch (action) {
    case Action::KILL: return SECCOMP_RET_KILL_PROCESS;
    case Action::FAIL_ENOSYS: return SECCOMP_RET_ERRNO | ENOSYS;
    case Action::FAIL_EACCES: return SECCOMP_RET_ERRNO | EACCES;
  }
  return SECCOMP_RET_KILL_PROCESS;
}

// One instruction of a rule; a jump marked `to_next` goes to the rule's end (the next rule), which is
// known only once the whole rule is written.
struct Step {
  sock_filter ins;
  bool true_to_next = false;
  bool false_to_next = false;
};

using Steps = std::vector<Step>;

void load(Steps& s, std::uint32_t offset) { s.push_back({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)}); }

// A jump that either goes on (0) or leaves the rule, by which branch.
void jump(Steps& s, std::uint16_t op, std::uint32_t k, bool true_leaves, bool false_leaves) {
  s.push_back({BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0), true_leaves, false_leaves});
}

// Falls through to the next instruction when `test` holds, else leaves the rule.
void emit_test(Steps& s, const ArgTest& test) {
  using Kind = ArgTest::Kind;
  // BPF compares 32 bits at a time: the high halves decide unless they are equal.
  const auto high = static_cast<std::uint32_t>(test.value >> 32), low = static_cast<std::uint32_t>(test.value);
  if (test.kind == Kind::BELOW) {
    load(s, arg_high(test.arg));
    jump(s, BPF_JGT, high, true, false);
    s.push_back({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, high, 0, 2)});  // high half below: holds, skip the low half
    load(s, arg_low(test.arg));
    jump(s, BPF_JGE, low, true, false);
    return;
  }
  if (test.kind == Kind::AT_LEAST) {
    load(s, arg_high(test.arg));
    s.push_back({BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, high, 3, 0)});  // high half above: holds, skip the rest
    jump(s, BPF_JEQ, high, false, true);
    load(s, arg_low(test.arg));
    jump(s, BPF_JGE, low, false, true);
    return;
  }
  load(s, arg_low(test.arg));
  const auto value = static_cast<std::uint32_t>(test.value);
  switch (test.kind) {
    case Kind::HAS_ANY: jump(s, BPF_JSET, test.mask, false, true); break;
    case Kind::HAS_NONE: jump(s, BPF_JSET, test.mask, true, false); break;
    case Kind::MASKED_NE:
      s.push_back({BPF_STMT(BPF_ALU | BPF_AND | BPF_K, test.mask)});
      jump(s, BPF_JEQ, value, true, false);
      break;
    case Kind::EQ: jump(s, BPF_JEQ, value, false, true); break;
    case Kind::NE: jump(s, BPF_JEQ, value, true, false); break;
    case Kind::BELOW:
    case Kind::AT_LEAST: break;
  }
}

// Appends `steps` with their jumps to the next rule resolved (the offset past the last step).
void append_resolved(std::vector<sock_filter>& program, const Steps& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    sock_filter ins = steps[i].ins;
    const auto to_next = static_cast<std::uint8_t>(steps.size() - i - 1);  // rules are a few dozen steps at most
    if (steps[i].true_to_next) ins.jt = to_next;
    if (steps[i].false_to_next) ins.jf = to_next;
    program.push_back(ins);
  }
}

}  // namespace

void add_all(std::vector<Rule>& rules, const std::vector<long>& nrs, Action action) {
  for (long nr : nrs) rules.push_back({nr, action, {}});
}

std::vector<sock_filter> compile_rules(const std::vector<Rule>& rules) {
  std::vector<sock_filter> p{
      // Another architecture's calling convention (int 0x80) could smuggle other numbers: kill.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArch),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      // x32 calls (bit 30 of the number) likewise.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  bool holds_nr = true;  // the accumulator still holds the call's number: no reload needed
  for (const Rule& rule : rules) {
    Steps s;
    if (!holds_nr) load(s, kNr);
    jump(s, BPF_JEQ, static_cast<std::uint32_t>(rule.nr), false, true);
    for (const ArgTest& test : rule.when) emit_test(s, test);
    s.push_back({BPF_STMT(BPF_RET | BPF_K, ret_value(rule.action))});
    append_resolved(p, s);
    holds_nr = rule.when.empty();
  }
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return p;
}

common::Fallible install_program(const std::vector<sock_filter>& program, bool all_threads) {
  if (program.size() > BPF_MAXINSNS) {
    return common::make_error("seccomp filter of " + std::to_string(program.size()) + " instructions is past the kernel's " +
                              std::to_string(BPF_MAXINSNS));
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return common::make_error(std::string("prctl(PR_SET_NO_NEW_PRIVS) failed: ") + std::strerror(errno));
  }
  sock_fprog prog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
  if (!all_threads) {
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
      return common::make_error(std::string("seccomp filter not installed: ") + std::strerror(errno));
    }
    return common::Ok{};
  }
  const long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (rc > 0) {
    return common::make_error("seccomp filter not installed: thread " + std::to_string(rc) +
                              " could not take it (SECCOMP_FILTER_FLAG_TSYNC)");
  }
  if (rc < 0) return common::make_error(std::string("seccomp filter not installed: ") + std::strerror(errno));
  return common::Ok{};
}

}  // namespace kernelrl::sandbox::seccomp
