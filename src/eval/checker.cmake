# Host-only evaluation core (dtypes, output checker, sample statistics): no CUDA, no Python.
# Included by src/eval/CMakeLists.txt into kernelrl_eval.
set(KERNELRL_EVAL_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/dtype.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checker.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stats.cpp
)
