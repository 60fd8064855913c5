# Terminal output helpers (tables, progress bar): no dependencies beyond the standard library.
# Included by src/common/CMakeLists.txt into kernelrl_common.
set(KERNELRL_COMMON_UI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/progress.cpp
)
