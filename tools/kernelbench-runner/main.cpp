// kernelrl-kernelbench-runner: the process a kernelbench candidate runs in (eval/kernelbench_serve.hpp).
#include "eval/kernelbench_serve.hpp"

int main(int argc, char** argv) { return kernelrl::eval::run_kernelbench_runner(argc, argv); }
