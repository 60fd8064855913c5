// What a candidate's compile may read: the toolchain, the headers and the loader's few files, never
// /etc as a whole, the user's home, the repository or another cache entry. The compilers run read-
// confined to these roots plus the candidate's own folder (tools/confine --read), so a file-reading
// directive the static scan missed (`.incbin` spelt through macro pasting) finds nothing to read.
// The roots are computed from where the tools are, not written for one machine: each compiler's and
// the interpreter's install prefix (the real path's folder above bin/), and the Python paths the
// interpreter itself reports (sys.prefix, site-packages, where torch is). Unusual layouts add roots
// through $KERNELRL_COMPILE_READ_ROOTS (colon-separated) or EngineConfig::compile_read_roots.
#pragma once

#include <string>
#include <vector>

namespace kernelrl::compile {

// Folders every compile may read below where they exist: the system's program and library trees.
inline const std::vector<std::string> kSystemReadRoots = {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt"};

// Single files outside those the tools open (the dynamic loader's cache and preload list, the
// time zone and locale aliases glibc reads, NSS's configuration, the overcommit setting nvcc reads,
// random bytes, the CPU and memory layout), and folders of device information: /sys/devices (CPU and
// NUMA topology, PCI devices) and /sys/bus/pci and /proc/driver/nvidia, which the CUDA driver reads
// when torch counts devices in the kernelbench prebuild.
inline const std::vector<std::string> kSystemReadFiles = {
    "/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime", "/etc/locale.alias", "/etc/nsswitch.conf",
    "/dev/null",        "/dev/zero",          "/dev/urandom",   "/dev/random",
    "/proc/sys/vm/overcommit_memory", "/proc/sys/vm/mmap_min_addr", "/proc/devices", "/proc/filesystems",
    "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
    "/proc/loadavg",    "/proc/driver/nvidia", "/sys/devices", "/sys/bus/pci"};

// What read_roots computes the list from.
struct ReadRootsInputs {
  std::vector<std::string> system;   // kept where they exist (kSystemReadRoots, kSystemReadFiles)
  std::vector<std::string> tools;    // compilers and the interpreter: each one's real path, and its
                                     // install prefix (the real path's grandparent: /usr/local/cuda-13.0
                                     // for .../bin/nvcc), or its own folder where that prefix is too broad
  std::vector<std::string> helpers;  // other programs the build runs (ninja from PATH): the real path only
  std::vector<std::string> folders;  // engine folders and the interpreter's paths: kept unless too broad
  std::vector<std::string> extra;    // configured by the user: kept as given (where they exist)
  std::string home;                  // $HOME: it and its ancestors are too broad
};

// Absolute, existing paths (symbolic links resolved, so a rule names what the kernel checks), without
// duplicates or paths below another folder of the list. "Too broad" (never a root unless given in
// `extra`): /, /etc, /home, /root, /tmp, /var, /run, /proc, /sys, /dev, the home folder and its
// ancestors.
std::vector<std::string> read_roots(const ReadRootsInputs& inputs);

// The interpreter's own paths (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.path, where torch
// and sitecustomize are), asked of `python` with the environment the prebuild inherits; empty when
// it does not run (the prebuild then fails with its own message).
std::vector<std::string> python_paths(const std::string& python);

// Splits a colon-separated list ($KERNELRL_COMPILE_READ_ROOTS), dropping empty items.
std::vector<std::string> split_path_list(const std::string& list);

}  // namespace kernelrl::compile
