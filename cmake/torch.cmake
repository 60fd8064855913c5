# kernelrl::torch: the PyTorch C++ library (libtorch) of the interpreter the engine embeds, found
# through that interpreter's torch.utils.cpp_extension so the same build works with Debian's
# python3-torch + libtorch-dev (CPU) and with the GPU machine's pip torch (CUDA). Using the embedded
# interpreter's own libtorch means the trainer and the worker's `import torch` load the same files.
execute_process(
  COMMAND ${Python_EXECUTABLE} -c
    "import torch, torch.utils.cpp_extension as c; print(','.join(c.include_paths())); print(','.join(c.library_paths())); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(int(torch.cuda.is_available() or torch.version.cuda is not None))"
  OUTPUT_VARIABLE _torch_info RESULT_VARIABLE _torch_rc ERROR_VARIABLE _torch_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "cannot ask ${Python_EXECUTABLE} where torch's C++ library is: ${_torch_err}")
endif()
string(REPLACE "\n" ";" _torch_lines "${_torch_info}")
list(GET _torch_lines -4 _torch_includes_raw)
list(GET _torch_lines -3 _torch_libdirs_raw)
list(GET _torch_lines -2 KERNELRL_TORCH_CXX11_ABI)
list(GET _torch_lines -1 KERNELRL_TORCH_HAS_CUDA)
string(REPLACE "," ";" _torch_includes "${_torch_includes_raw}")
string(REPLACE "," ";" _torch_libdirs "${_torch_libdirs_raw}")

set(_torch_libs)
foreach(lib torch torch_cpu c10)
  find_library(KERNELRL_TORCH_LIB_${lib} ${lib} HINTS ${_torch_libdirs} NO_DEFAULT_PATH)
  if(NOT KERNELRL_TORCH_LIB_${lib})
    message(FATAL_ERROR "lib${lib}.so not found in ${_torch_libdirs} (torch of ${Python_EXECUTABLE})")
  endif()
  list(APPEND _torch_libs ${KERNELRL_TORCH_LIB_${lib}})
endforeach()
if(KERNELRL_TORCH_HAS_CUDA)
  foreach(lib torch_cuda c10_cuda)
    find_library(KERNELRL_TORCH_LIB_${lib} ${lib} HINTS ${_torch_libdirs} NO_DEFAULT_PATH)
    if(KERNELRL_TORCH_LIB_${lib})
      list(APPEND _torch_libs ${KERNELRL_TORCH_LIB_${lib}})
    endif()
  endforeach()
endif()

add_library(kernelrl_torch INTERFACE)
add_library(kernelrl::torch ALIAS kernelrl_torch)
target_include_directories(kernelrl_torch SYSTEM INTERFACE ${_torch_includes})
target_compile_definitions(kernelrl_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${KERNELRL_TORCH_CXX11_ABI})
# --no-as-needed: libtorch_cuda registers the CUDA backend from static initialisers; nothing
# references it by symbol, so an as-needed link would drop it and tensors could not go to the GPU.
# libstdc++ first: pip's libtorch.so exports its own (older) copy of std::filesystem, and symbols
# bind to the first library in the executable's NEEDED list that defines them; its remove_all
# jumped to address 0 on the GPU machine (docs/train.md). With libstdc++ first, the program's
# std:: calls reach the system library they were compiled against.
target_link_libraries(kernelrl_torch INTERFACE "-Wl,--no-as-needed" stdc++ ${_torch_libs} "-Wl,--as-needed")
string(REPLACE "," ":" _torch_rpath "${_torch_libdirs_raw}")
target_link_options(kernelrl_torch INTERFACE "-Wl,-rpath,${_torch_rpath}")
message(STATUS "libtorch: ${_torch_libdirs_raw} (CUDA: ${KERNELRL_TORCH_HAS_CUDA}, cxx11 abi: ${KERNELRL_TORCH_CXX11_ABI})")
