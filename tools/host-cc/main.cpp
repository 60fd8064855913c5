// The host compiler nvcc runs for native candidates (-ccbin): passes every call to the real gcc,
// compiling nvcc's host translation unit against a cached precompiled header (compile/host_pch.hpp).
#include <string>
#include <vector>

#include "compile/host_pch.hpp"

int main(int argc, char** argv) {
  return kernelrl::compile::host_pch::run_wrapper(std::vector<std::string>(argv + 1, argv + argc));
}
