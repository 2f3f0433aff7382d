# aotc CUDA glue: CMake fragment included by every CUDA package's CMakeLists.txt, after
# runtime_stub/runtime.cmake. Defines, once per CMake build however many packages include it,
# aotc_cuda: the static library running device modules (aotc_cuda.cpp) over the CUDA runtime.
# Needs the CUDA toolkit (nvcc, cudart) to build and an NVIDIA driver to run.
find_package(CUDAToolkit REQUIRED)

if(NOT TARGET aotc_cuda)
  add_library(aotc_cuda STATIC ${CMAKE_CURRENT_LIST_DIR}/aotc_cuda.cpp)
  target_include_directories(aotc_cuda PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(aotc_cuda PUBLIC aotc_runtime CUDA::cudart)
  set_target_properties(aotc_cuda PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                        CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(aotc_cuda PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-O2 -Wall -Wextra>)
endif()
