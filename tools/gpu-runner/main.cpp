// kernelrl-gpu-runner: the process a native candidate runs in (runner/device_runner.hpp).
#include "runner/device_runner.hpp"

int main(int argc, char** argv) { return kernelrl::runner::run_device_runner(argc, argv); }
