#include "sandbox/syscall_filter.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "sandbox/seccomp_rules.hpp"

// Values fixed by the kernel ABI, for C library headers that predate them.
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef PR_SET_MM
#define PR_SET_MM 35
#endif

namespace kernelrl::sandbox {

namespace {

using namespace seccomp;  // Rule, Action and the argument tests (has_any, below, ...)

constexpr std::uint32_t kMapType = 0x0f;  // mmap's mapping type: MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE
constexpr std::uint32_t kQueryPersonality = 0xffffffff;
// O_TMPFILE's own bit: the C library's O_TMPFILE and __O_TMPFILE also carry O_DIRECTORY, which every
// listing of a folder passes.
constexpr std::uint32_t kTmpFileBit = 020000000;

// Both profiles: no network, tracing or reading others' memory, mounts, namespaces, modules, reboot,
// swap, io_uring (its calls bypass this filter).
std::vector<Rule> build_rules() {
  std::vector<Rule> rules{{SYS_socket, Action::KILL, {ne(0, AF_UNIX)}}};  // local sockets only
  add_all(rules,
          {SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot,
           SYS_unshare, SYS_setns, SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_reboot,
           SYS_swapon, SYS_swapoff, SYS_io_uring_setup, SYS_pidfd_getfd, SYS_process_madvise},
          Action::KILL);
  return rules;
}

// The Build rules, and no processes, exec or signals to other processes: a candidate must not stop or
// kill the worker that evaluates it.
std::vector<Rule> candidate_rules() {
  std::vector<Rule> rules = build_rules();
  const auto self = static_cast<std::uint32_t>(::getpid());
  const auto own_group = static_cast<std::uint32_t>(-static_cast<std::int32_t>(self));
  const std::vector<Rule> processes{
      // clone3 hides its flags in memory BPF cannot read: "not implemented" makes the C library fall
      // back to clone, whose flags can be checked; threads (CLONE_THREAD) pass, processes do not.
      {SYS_clone3, Action::FAIL_ENOSYS, {}},
      {SYS_clone, Action::KILL, {has_none(0, CLONE_THREAD)}},
      // Signals to itself only: its pid, its own process group, or 0 (its group).
      {SYS_kill, Action::KILL, {ne(0, self), ne(0, 0), ne(0, own_group)}},
      {SYS_tgkill, Action::KILL, {ne(0, self)}},
      {SYS_rt_sigqueueinfo, Action::KILL, {ne(0, self)}},
      {SYS_rt_tgsigqueueinfo, Action::KILL, {ne(0, self)}},
  };
  rules.insert(rules.end(), processes.begin(), processes.end());
  add_all(rules, {SYS_fork, SYS_vfork, SYS_execve, SYS_execveat, SYS_pidfd_open, SYS_pidfd_send_signal}, Action::KILL);
  return rules;
}

// W^X: code only from files the process can read and not write (Landlock sees to that), mapped
// private and read-only, which is how the dynamic loader maps a library; never from memory the
// process can write or could have written.
void add_write_xor_execute(std::vector<Rule>& rules) {
  const std::vector<Rule> exec{
      {SYS_mmap, Action::KILL, {has_any(2, PROT_EXEC), has_any(2, PROT_WRITE)}},
      {SYS_mmap, Action::KILL, {has_any(2, PROT_EXEC), has_any(3, MAP_ANONYMOUS)}},
      // A shared mapping's file may be written through another mapping or descriptor.
      {SYS_mmap, Action::KILL, {has_any(2, PROT_EXEC), masked_ne(3, kMapType, MAP_PRIVATE)}},
      // Making written memory executable; glibc's dlopen never asks (only an executable stack would).
      {SYS_mprotect, Action::KILL, {has_any(2, PROT_EXEC)}},
      {SYS_pkey_mprotect, Action::KILL, {has_any(2, PROT_EXEC)}},
      // READ_IMPLIES_EXEC would make every readable mapping executable: only the query passes.
      {SYS_personality, Action::KILL, {ne(0, kQueryPersonality)}},
  };
  rules.insert(rules.end(), exec.begin(), exec.end());
  // Anonymous files (writable, then mappable as a "file"), old ways of mapping code or shared memory.
  add_all(rules, {SYS_memfd_create, SYS_remap_file_pages, SYS_shmat, SYS_uselib}, Action::KILL);
#ifdef SYS_memfd_secret
  add_all(rules, {SYS_memfd_secret}, Action::KILL);
#endif
}

// The runner's code, read-only data and relocations stay as exec mapped them: nothing below
// `image_end` may be unmapped, re-protected, advised (MADV_DONTNEED would zero its data), moved or
// mapped over.
void add_immutable_image(std::vector<Rule>& rules, std::uint64_t image_end) {
  if (image_end == 0) return;
  const std::vector<Rule> image{
      {SYS_mprotect, Action::KILL, {below(0, image_end)}},
      {SYS_pkey_mprotect, Action::KILL, {below(0, image_end)}},
      {SYS_munmap, Action::KILL, {below(0, image_end)}},
      {SYS_madvise, Action::KILL, {below(0, image_end)}},
      {SYS_mremap, Action::KILL, {below(0, image_end)}},
      {SYS_mremap, Action::KILL, {has_any(3, MREMAP_FIXED), below(4, image_end)}},
      {SYS_mmap, Action::KILL, {has_any(3, MAP_FIXED | MAP_FIXED_NOREPLACE), below(0, image_end)}},
  };
  rules.insert(rules.end(), image.begin(), image.end());
}

// No file is created, truncated, linked, renamed, removed or re-owned anywhere (Landlock decides
// where existing files may be written: the GPU's device files). O_RDWR without these flags passes:
// CUDA opens /dev/nvidia* read-write. An open that could create or empty a file, and mkdir, fail
// with EACCES, as Landlock would refuse them, rather than killing: honest libraries make such calls
// and survive their failure (seen on the H200, driver 580: the CUDA driver names its threads through
// fopen("/proc/self/task/TID/comm", "wb"), which has O_CREAT | O_TRUNC, makes ~/.nv with mkdir, and
// opens ~/.nv/ComputeCache/index "wb+" when it compiles PTX).
void add_no_file_changes(std::vector<Rule>& rules) {
  constexpr std::uint32_t kMakesOrEmpties = O_CREAT | O_TRUNC | kTmpFileBit;
  const std::vector<Rule> opens{
      {SYS_open, Action::FAIL_EACCES, {has_any(1, kMakesOrEmpties)}},
      {SYS_openat, Action::FAIL_EACCES, {has_any(2, kMakesOrEmpties)}},
      {SYS_mkdir, Action::FAIL_EACCES, {}},
      {SYS_mkdirat, Action::FAIL_EACCES, {}},
#ifdef SYS_openat2
      {SYS_openat2, Action::FAIL_ENOSYS, {}},  // flags in memory BPF cannot read; the C library never needs it
#endif
  };
  rules.insert(rules.end(), opens.begin(), opens.end());
  add_all(rules,
          {SYS_creat, SYS_mknod, SYS_mknodat, SYS_link, SYS_linkat, SYS_symlink, SYS_symlinkat,
           SYS_rename, SYS_renameat, SYS_renameat2, SYS_unlink, SYS_unlinkat, SYS_rmdir, SYS_truncate, SYS_chmod,
           SYS_fchmod, SYS_fchmodat, SYS_chown, SYS_fchown, SYS_lchown, SYS_fchownat, SYS_utimensat, SYS_utimes,
           SYS_futimesat, SYS_utime,
           // Landlock does not see extended attributes; as root they carry file capabilities.
           SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr},
          Action::KILL);
#ifdef SYS_fchmodat2
  add_all(rules, {SYS_fchmodat2}, Action::KILL);
#endif
#ifdef SYS_setxattrat
  add_all(rules, {SYS_setxattrat, SYS_removexattrat}, Action::KILL);
#endif
}

// What root could do to the machine or to other processes (the engine runs as root on the GPU
// machine): change the clocks the evaluator times with, open files by handle past Landlock, load BPF,
// read performance counters, use keys, I/O ports, the new mount API, scheduling and priorities, ids
// and capabilities, resource limits (root may raise its hard limits, the file-size one included),
// the process's memory map fields (PR_SET_MM). Landlock and seccomp calls stay: they only restrict.
void add_no_root_powers(std::vector<Rule>& rules) {
  add_all(rules,
          {SYS_adjtimex, SYS_clock_adjtime, SYS_clock_settime, SYS_settimeofday, SYS_open_by_handle_at,
           SYS_name_to_handle_at, SYS_perf_event_open, SYS_bpf, SYS_userfaultfd, SYS_keyctl, SYS_add_key, SYS_request_key,
           SYS_iopl, SYS_ioperm, SYS_modify_ldt, SYS_kcmp, SYS_fanotify_init, SYS_acct, SYS_quotactl, SYS_sethostname,
           SYS_setdomainname, SYS_syslog, SYS_vhangup, SYS_setpriority, SYS_sched_setscheduler, SYS_sched_setattr,
           SYS_ioprio_set, SYS_setuid, SYS_setgid, SYS_setreuid, SYS_setregid, SYS_setresuid, SYS_setresgid,
           SYS_setgroups, SYS_setfsuid, SYS_setfsgid, SYS_capset, SYS_kexec_file_load, SYS_setrlimit,
           // tkill's target is any thread id of any process: glibc uses tgkill, which is checked.
           SYS_tkill},
          Action::KILL);
#ifdef SYS_open_tree
  add_all(rules, {SYS_move_mount, SYS_open_tree, SYS_fsopen, SYS_fsmount, SYS_fspick}, Action::KILL);
#endif
#ifdef SYS_mount_setattr
  add_all(rules, {SYS_mount_setattr}, Action::KILL);
#endif
#ifdef SYS_quotactl_fd
  add_all(rules, {SYS_quotactl_fd}, Action::KILL);
#endif
  const std::vector<Rule> conditional{
      {SYS_prctl, Action::KILL, {eq(0, PR_SET_MM)}},
      // Reading limits (a null new limit, as getrlimit passes) stays allowed.
      {SYS_prlimit64, Action::KILL, {at_least(2, 1)}},
  };
  rules.insert(rules.end(), conditional.begin(), conditional.end());
}

std::vector<Rule> runner_rules(const RunnerFilterOptions& options) {
  std::vector<Rule> rules = candidate_rules();
  // No sockets at all: the candidate filter's local (AF_UNIX) ones could reach a daemon's socket file
  // (Landlock does not cover connecting to a path); the runner needs none. Nor System V IPC or POSIX
  // message queues: state kept there would outlive the process, for the next candidate to find.
  add_all(rules,
          {SYS_socket, SYS_socketpair, SYS_shmget, SYS_shmctl, SYS_msgget, SYS_msgsnd, SYS_msgrcv, SYS_msgctl,
           SYS_semget, SYS_semop, SYS_semtimedop, SYS_semctl, SYS_mq_open, SYS_mq_unlink},
          Action::KILL);
  add_write_xor_execute(rules);
  add_immutable_image(rules, options.image_end);
  add_no_file_changes(rules);
  add_no_root_powers(rules);
  return rules;
}

}  // namespace

common::Fallible install_syscall_filter(FilterProfile profile) {
  const std::vector<Rule> rules = profile == FilterProfile::Build ? build_rules() : candidate_rules();
  return seccomp::install_program(seccomp::compile_rules(rules), false);
}

const char* syscall_filter_summary(FilterProfile profile) {
  if (profile == FilterProfile::Build) {
    return "no network sockets, no ptrace or process_vm_*, no io_uring, no mount/namespace/module/reboot calls";
  }
  return "no new processes (fork, vfork, clone without CLONE_THREAD), no exec, no network sockets, no ptrace or "
         "process_vm_*, no signals to other processes, no io_uring, no mount/namespace/module/reboot calls";
}

common::Fallible install_runner_filter(const RunnerFilterOptions& options) {
  const int persona = ::personality(kQueryPersonality);
  if (persona != -1 && (persona & READ_IMPLIES_EXEC) != 0) {
    return common::make_error("runner filter not installed: the process has READ_IMPLIES_EXEC (every readable mapping "
                              "is executable); link the runner with -z noexecstack");
  }
  return seccomp::install_program(seccomp::compile_rules(runner_rules(options)), true);
}

const char* runner_filter_summary() {
  return "as for a candidate, and no sockets at all, no System V IPC or message queues, no executable memory that "
         "is or was writable (anonymous, shared or writable PROT_EXEC mappings, mprotect to PROT_EXEC, memfd, "
         "READ_IMPLIES_EXEC), no change to the runner's image, no "
         "file creation (EACCES), truncation, renaming, removal or ownership change, no open by handle, no clock, key, "
         "BPF, perf, mount-API, priority, resource-limit, id or capability changes";
}

}  // namespace kernelrl::sandbox
