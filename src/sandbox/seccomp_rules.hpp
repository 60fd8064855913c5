// A seccomp-BPF filter written as data: a list of rules "system call NR, when every test on its
// arguments holds, gets ACTION", checked in order; a call that no rule answers is allowed. Rules for
// one call combine as "any rule" of "all tests" (write A or B as two rules). compile_rules turns the
// list into BPF for x86-64, behind a prologue that kills every other architecture's calls (the i386
// int 0x80 entry) and x32's, whose numbers would otherwise slip past the list. Used by
// sandbox/syscall_filter.cpp, which holds the profiles' tables.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::sandbox::seccomp {

enum class Action {
  KILL,         // SECCOMP_RET_KILL_PROCESS: the whole process dies of SIGSYS, no handler runs
  FAIL_ENOSYS,  // the call fails with ENOSYS (for calls whose arguments BPF cannot read; the C library falls back)
  FAIL_EACCES,  // the call fails with EACCES, as Landlock would refuse it (for calls honest libraries make and survive)
};

// One test on one argument (0..5). Flag and protection arguments are read as their low 32 bits, which
// is all the kernel reads of them (int or unsigned int parameters, or flags with no bit above 31);
// BELOW and AT_LEAST compare all 64 bits, as addresses and pointers need.
struct ArgTest {
  enum class Kind {
    HAS_ANY,    // (arg & mask) != 0
    HAS_NONE,   // (arg & mask) == 0
    MASKED_NE,  // (arg & mask) != value
    EQ,         // arg == value
    NE,         // arg != value
    BELOW,      // arg < value, unsigned, 64-bit
    AT_LEAST,   // arg >= value, unsigned, 64-bit
  };
  Kind kind;
  int arg;
  std::uint32_t mask;
  std::uint64_t value;
};

inline ArgTest has_any(int arg, std::uint32_t mask) { return {ArgTest::Kind::HAS_ANY, arg, mask, 0}; }
inline ArgTest has_none(int arg, std::uint32_t mask) { return {ArgTest::Kind::HAS_NONE, arg, mask, 0}; }
inline ArgTest masked_ne(int arg, std::uint32_t mask, std::uint32_t value) {
  return {ArgTest::Kind::MASKED_NE, arg, mask, value};
}
inline ArgTest eq(int arg, std::uint32_t value) { return {ArgTest::Kind::EQ, arg, 0, value}; }
inline ArgTest ne(int arg, std::uint32_t value) { return {ArgTest::Kind::NE, arg, 0, value}; }
inline ArgTest below(int arg, std::uint64_t bound) { return {ArgTest::Kind::BELOW, arg, 0, bound}; }
inline ArgTest at_least(int arg, std::uint64_t bound) { return {ArgTest::Kind::AT_LEAST, arg, 0, bound}; }

struct Rule {
  long nr;                    // the system call's number (SYS_...)
  Action action;
  std::vector<ArgTest> when;  // all must hold; empty: always
};

// Appends one unconditional rule per number in `nrs`.
void add_all(std::vector<Rule>& rules, const std::vector<long>& nrs, Action action);

// The BPF program for `rules` (prologue, rules in order, then allow). Pure; no size check.
std::vector<sock_filter> compile_rules(const std::vector<Rule>& rules);

// Sets no_new_privs and installs `program` in the calling thread, and with `all_threads` in every
// thread the process already has (SECCOMP_FILTER_FLAG_TSYNC: a thread started before the filter would
// otherwise run unfiltered, and code that can rewrite its memory could make it call anything).
// Irreversible; inherited by later threads and children. Fails (installing nothing) without seccomp,
// when the program is too long, or when a thread cannot be synchronised.
common::Fallible install_program(const std::vector<sock_filter>& program, bool all_threads);

}  // namespace kernelrl::sandbox::seccomp
