# aotc tiled-NPU toolchain and glue: CMake fragment included by every npu-tiled package's
# CMakeLists.txt, after runtime_stub/runtime.cmake. Defines, once per CMake build:
#   aotc_tiled                    the glue (aotc_tiled.cpp) the model library links;
#   aotc_tiled_kernels(T SOURCE)  builds the kernel source SOURCE (C++ against aotc_tile_api.h)
#                                 into target T.
# The kernels build with the host compiler against aotc's emulation of the tile API
# (emulation/aotc_tile_emulation.cpp): each kernel runs once per tile, every DDR access is checked
# against the tile's slices of the compile's distributions, every operand against the tile's CMX.
# Options (bytes), passed to the code as macros of the same names:
#   AOTC_NPU_CMX_BYTES  CMX per tile (default 2 MiB): a kernel whose buffers do not fit fails at
#                       run time with a status naming the kernel, the bytes and its buffers;
#   AOTC_NPU_DDR_BYTES  DDR (default 16 GiB).
# AOTC_TILE_TEST_ACCESS_SHIFT (tests only; default 0): every DDR access is checked as if this many
# elements further on, to provoke an access outside a tile's slices.
cmake_policy(SET CMP0077 NEW)
include(${CMAKE_CURRENT_LIST_DIR}/../npu/npu.cmake)

set(AOTC_NPU_CMX_BYTES 2097152 CACHE STRING "Emulated CMX per tile, bytes")
set(AOTC_NPU_DDR_BYTES 17179869184 CACHE STRING "Emulated DDR, bytes")
set(AOTC_TILE_TEST_ACCESS_SHIFT 0 CACHE STRING "Tests only: shift every checked DDR access by this many elements")

if(NOT TARGET aotc_tiled)
  set(_aotc_tiled_dir ${CMAKE_CURRENT_LIST_DIR})
  add_library(aotc_tile_emulation STATIC ${_aotc_tiled_dir}/emulation/aotc_tile_emulation.cpp)
  target_include_directories(aotc_tile_emulation PUBLIC ${_aotc_tiled_dir} ${_aotc_tiled_dir}/emulation)
  target_compile_definitions(aotc_tile_emulation PUBLIC
    AOTC_NPU_CMX_BYTES=${AOTC_NPU_CMX_BYTES}
    AOTC_NPU_DDR_BYTES=${AOTC_NPU_DDR_BYTES}ULL
    PRIVATE AOTC_TILE_TEST_ACCESS_SHIFT=${AOTC_TILE_TEST_ACCESS_SHIFT})
  target_link_libraries(aotc_tile_emulation PUBLIC aotc_runtime)
  aotc_npu_glue(aotc_tiled ${_aotc_tiled_dir}/aotc_tiled.cpp aotc_tile_emulation)
endif()

function(aotc_tiled_kernels target source)
  target_sources(${target} PRIVATE ${source})
endfunction()
