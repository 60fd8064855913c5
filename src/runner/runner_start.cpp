#include "runner/runner_start.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "runner/protocol.hpp"

extern "C" char _end[];  // the linker's end of the executable's bss

namespace kernelrl::runner {

namespace {

template <typename T>
bool parse_number(const char* text, T& out) {
  const char* end = text + std::strlen(text);
  auto [p, ec] = std::from_chars(text, end, out);
  return ec == std::errc() && p == end;
}

}  // namespace

common::Expected<RunnerArgs> parse_runner_args(int argc, char** argv) {
  RunnerArgs a;
  std::string device;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) return common::make_error(std::string("runner: ") + argv[i] + " needs a value");
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--kind") {
      a.kind = value;
    } else if (flag == "--device") {
      device = value;
    } else if (flag == "--pages-fd") {
      if (!parse_number(value, a.pages_fd) || a.pages_fd < 3) {
        return common::make_error(std::string("runner: --pages-fd ") + value + " is not a descriptor number >= 3");
      }
    } else if (flag == "--parent") {
      if (!parse_number(value, a.parent) || a.parent <= 1) {
        return common::make_error(std::string("runner: --parent ") + value + " is not a process id");
      }
    } else {
      return common::make_error("runner: unknown argument " + flag);
    }
  }
  if (a.kind != "host" && a.kind != "native" && a.kind != "kernelbench") {
    return common::make_error("runner: --kind '" + a.kind + "' is not host, native or kernelbench");
  }
  if (device != "cpu" && device != "cuda") return common::make_error("runner: --device '" + device + "' is not cpu or cuda");
  a.cuda = device == "cuda";
  if (a.pages_fd < 0 || a.parent < 0) return common::make_error("runner: --pages-fd and --parent are required");
  return a;
}

common::Expected<sandbox::SharedPages> begin_runner(const RunnerArgs& a) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != a.parent) _exit(1);
  // Every descriptor but the standard three and the pages': the exec already closed the
  // close-on-exec ones; this closes any the evaluator's process leaked without the flag.
  if (a.pages_fd > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(a.pages_fd - 1), 0u);
  ::syscall(SYS_close_range, static_cast<unsigned>(a.pages_fd + 1), ~0u, 0u);
  auto pages = sandbox::SharedPages::map_memory_file(a.pages_fd, kDataOffset);
  if (!pages) return pages.error();
  pages->drop_descriptor();
  return pages;
}

std::uint64_t program_image_end() {
  const auto end = reinterpret_cast<std::uint64_t>(&_end[0]);
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return (end + page - 1) / page * page;
}

}  // namespace kernelrl::runner
