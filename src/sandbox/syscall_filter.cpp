#include "sandbox/syscall_filter.hpp"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kernelrl::sandbox {

namespace {

using Program = std::vector<sock_filter>;

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr std::uint32_t kNoSys = SECCOMP_RET_ERRNO | ENOSYS;

void stmt(Program& p, std::uint16_t code, std::uint32_t k) { p.push_back(BPF_STMT(code, k)); }
void jump(Program& p, std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  p.push_back(BPF_JUMP(code, k, jt, jf));
}

constexpr std::uint32_t kNr = offsetof(struct seccomp_data, nr);
constexpr std::uint32_t kArch = offsetof(struct seccomp_data, arch);
constexpr std::uint32_t kArg0Low = offsetof(struct seccomp_data, args[0]);  // little-endian: low 32 bits

// Kills on syscall `nr`.
void kill_on(Program& p, int nr) {
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1);
  stmt(p, BPF_RET | BPF_K, kKill);
}

Program build_program(FilterProfile profile) {
  Program p;
  // Another architecture's calling convention could smuggle other syscall numbers: kill.
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kArch);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  stmt(p, BPF_RET | BPF_K, kKill);
  // x32 syscalls (nr with bit 30 set) likewise.
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
  jump(p, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
  stmt(p, BPF_RET | BPF_K, kKill);

  // socket: local (AF_UNIX) only; no network.
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3);
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kArg0Low);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0);
  stmt(p, BPF_RET | BPF_K, kKill);
  for (int nr : {SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_mount, SYS_umount2, SYS_pivot_root,
                 SYS_chroot, SYS_unshare, SYS_setns, SYS_init_module, SYS_finit_module, SYS_delete_module,
                 SYS_kexec_load, SYS_reboot, SYS_swapon, SYS_swapoff, SYS_io_uring_setup, SYS_pidfd_getfd,
                 SYS_process_madvise}) {
    kill_on(p, nr);
  }
  if (profile == FilterProfile::Build) {
    stmt(p, BPF_RET | BPF_K, kAllow);
    return p;
  }

  // clone3 hides its flags in memory BPF cannot read: say "not implemented" so the C library
  // falls back to clone, whose flags can be checked.
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
  stmt(p, BPF_RET | BPF_K, kNoSys);
  // clone: threads (CLONE_THREAD) are fine, new processes are not.
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3);
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kArg0Low);
  jump(p, BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0);
  stmt(p, BPF_RET | BPF_K, kKill);

  // Signals: only to itself (its pid, its own process group, or 0 = its group). A candidate must
  // not stop or kill the worker that evaluates it.
  const std::uint32_t self = static_cast<std::uint32_t>(::getpid());
  const std::uint32_t own_group = static_cast<std::uint32_t>(-static_cast<std::int32_t>(self));
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 0, 5);
  stmt(p, BPF_LD | BPF_W | BPF_ABS, kArg0Low);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, self, 3, 0);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
  jump(p, BPF_JMP | BPF_JEQ | BPF_K, own_group, 1, 0);
  stmt(p, BPF_RET | BPF_K, kKill);
  for (int nr : {SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo}) {  // first argument: the target's pid
    stmt(p, BPF_LD | BPF_W | BPF_ABS, kNr);
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 3);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, kArg0Low);
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, self, 1, 0);
    stmt(p, BPF_RET | BPF_K, kKill);
  }

  for (int nr : {SYS_fork, SYS_vfork, SYS_execve, SYS_execveat, SYS_pidfd_open, SYS_pidfd_send_signal}) {
    kill_on(p, nr);
  }
  stmt(p, BPF_RET | BPF_K, kAllow);
  return p;
}

}  // namespace

common::Fallible install_syscall_filter(FilterProfile profile) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return common::make_error(std::string("prctl(PR_SET_NO_NEW_PRIVS) failed: ") + std::strerror(errno));
  }
  Program program = build_program(profile);
  sock_fprog prog{static_cast<unsigned short>(program.size()), program.data()};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
    return common::make_error(std::string("seccomp filter not installed: ") + std::strerror(errno));
  }
  return common::Ok{};
}

const char* syscall_filter_summary(FilterProfile profile) {
  if (profile == FilterProfile::Build) {
    return "no network sockets, no ptrace or process_vm_*, no io_uring, no mount/namespace/module/reboot calls";
  }
  return "no new processes (fork, vfork, clone without CLONE_THREAD), no exec, no network sockets, no ptrace or "
         "process_vm_*, no signals to other processes, no io_uring, no mount/namespace/module/reboot calls";
}

}  // namespace kernelrl::sandbox
