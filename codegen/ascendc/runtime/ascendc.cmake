# aotc Ascend toolchain and glue: CMake fragment included by every Ascend package's
# CMakeLists.txt, after runtime_stub/runtime.cmake. Defines, once per CMake build however many
# packages include it:
#   aotc_ascend                    the ACL glue (aotc_ascend.cpp) the model library links;
#   aotc_ascend_kernels(T SOURCE)  builds the kernel source SOURCE into target T.
#
# AOTC_ASCEND_TOOLCHAIN chooses how:
#   emulation (the default)  the host C++ compiler builds the kernels with ASCENDC_CPU_DEBUG against
#                            aotc's emulation of Ascend C and ACL (emulation/), as CANN's CPU-debug
#                            mode does: the package runs on any machine, with the chip's rules
#                            enforced. The on-chip capacities it enforces are these cache options
#                            (bytes per core; defaults: Atlas A2 / Ascend 910B), passed to the code
#                            as macros of the same names:
#                              AOTC_ASCEND_UB_BYTES AOTC_ASCEND_L1_BYTES AOTC_ASCEND_L0A_BYTES
#                              AOTC_ASCEND_L0B_BYTES AOTC_ASCEND_L0C_BYTES
#                            and the device memory, AOTC_ASCEND_HBM_BYTES. Lower them to model a
#                            smaller part: a kernel whose buffers no longer fit fails at run time
#                            with a status naming the kernel, the buffer and the bytes.
#   cann                     CANN's bisheng compiles the kernels for the NPU (ascendc_library of the
#                            toolkit's ascendc_kernel_cmake) and the glue links ascendcl. Needs a
#                            CANN toolkit (8.0 or later): ASCEND_HOME_PATH set by its set_env.sh, or
#                            -DASCEND_CANN_PACKAGE_PATH=/usr/local/Ascend/ascend-toolkit/latest;
#                            AOTC_ASCEND_SOC_VERSION names the chip (Ascend910B2).
#                            [Not tested by aotc's CI, which has no CANN: the kernel source is the
#                            same text the emulation builds.]
cmake_policy(SET CMP0077 NEW)
include(${CMAKE_CURRENT_LIST_DIR}/../npu/npu.cmake)

set(AOTC_ASCEND_TOOLCHAIN "emulation" CACHE STRING "How Ascend kernels are built: emulation or cann")
set_property(CACHE AOTC_ASCEND_TOOLCHAIN PROPERTY STRINGS emulation cann)
set(AOTC_ASCEND_UB_BYTES 196352 CACHE STRING "Emulated Unified Buffer per vector core, bytes")
set(AOTC_ASCEND_L1_BYTES 524032 CACHE STRING "Emulated L1 buffer per cube core, bytes")
set(AOTC_ASCEND_L0A_BYTES 65536 CACHE STRING "Emulated L0A buffer per cube core, bytes")
set(AOTC_ASCEND_L0B_BYTES 65536 CACHE STRING "Emulated L0B buffer per cube core, bytes")
set(AOTC_ASCEND_L0C_BYTES 131072 CACHE STRING "Emulated L0C buffer per cube core, bytes")
set(AOTC_ASCEND_HBM_BYTES 68719476736 CACHE STRING "Emulated device memory, bytes")
set(AOTC_ASCEND_SOC_VERSION "Ascend910B2" CACHE STRING "The chip CANN compiles for")

if(NOT TARGET aotc_ascend)
  set(_aotc_ascend_dir ${CMAKE_CURRENT_LIST_DIR})
  if(AOTC_ASCEND_TOOLCHAIN STREQUAL "emulation")
    find_package(Threads REQUIRED)
    add_library(aotc_ascendc_emulation STATIC ${_aotc_ascend_dir}/emulation/aotc_ascendc_emulation.cpp)
    target_include_directories(aotc_ascendc_emulation PUBLIC ${_aotc_ascend_dir}/emulation)
    target_compile_definitions(aotc_ascendc_emulation PUBLIC
      ASCENDC_CPU_DEBUG
      AOTC_ASCEND_UB_BYTES=${AOTC_ASCEND_UB_BYTES}
      AOTC_ASCEND_L1_BYTES=${AOTC_ASCEND_L1_BYTES}
      AOTC_ASCEND_L0A_BYTES=${AOTC_ASCEND_L0A_BYTES}
      AOTC_ASCEND_L0B_BYTES=${AOTC_ASCEND_L0B_BYTES}
      AOTC_ASCEND_L0C_BYTES=${AOTC_ASCEND_L0C_BYTES}
      AOTC_ASCEND_HBM_BYTES=${AOTC_ASCEND_HBM_BYTES}ULL)
    target_link_libraries(aotc_ascendc_emulation PUBLIC aotc_runtime Threads::Threads)
    set(_aotc_ascend_backend aotc_ascendc_emulation)
  elseif(AOTC_ASCEND_TOOLCHAIN STREQUAL "cann")
    if(NOT ASCEND_CANN_PACKAGE_PATH)
      if(DEFINED ENV{ASCEND_HOME_PATH})
        set(ASCEND_CANN_PACKAGE_PATH $ENV{ASCEND_HOME_PATH})
      elseif(EXISTS /usr/local/Ascend/ascend-toolkit/latest)
        set(ASCEND_CANN_PACKAGE_PATH /usr/local/Ascend/ascend-toolkit/latest)
      endif()
    endif()
    set(_aotc_ascendc_cmake ${ASCEND_CANN_PACKAGE_PATH}/tools/tikcpp/ascendc_kernel_cmake)
    if(NOT ASCEND_CANN_PACKAGE_PATH OR NOT EXISTS ${_aotc_ascendc_cmake})
      message(FATAL_ERROR "aotc Ascend package: AOTC_ASCEND_TOOLCHAIN=cann needs a CANN toolkit: "
                          "source its set_env.sh (ASCEND_HOME_PATH) or pass "
                          "-DASCEND_CANN_PACKAGE_PATH=<toolkit>; '${_aotc_ascendc_cmake}' was not found")
    endif()
    set(SOC_VERSION ${AOTC_ASCEND_SOC_VERSION})
    set(RUN_MODE npu)
    include(${_aotc_ascendc_cmake}/ascendc.cmake)
    add_library(aotc_ascend_acl INTERFACE)
    target_include_directories(aotc_ascend_acl INTERFACE ${ASCEND_CANN_PACKAGE_PATH}/include)
    target_link_directories(aotc_ascend_acl INTERFACE ${ASCEND_CANN_PACKAGE_PATH}/lib64)
    target_link_libraries(aotc_ascend_acl INTERFACE ascendcl aotc_runtime)
    set(_aotc_ascend_backend aotc_ascend_acl)
  else()
    message(FATAL_ERROR "AOTC_ASCEND_TOOLCHAIN is '${AOTC_ASCEND_TOOLCHAIN}': give emulation or cann")
  endif()
  aotc_npu_glue(aotc_ascend ${_aotc_ascend_dir}/aotc_ascend.cpp ${_aotc_ascend_backend})
endif()

function(aotc_ascend_kernels target source)
  if(AOTC_ASCEND_TOOLCHAIN STREQUAL "cann")
    ascendc_library(${target}_kernels STATIC ${source})
    target_link_libraries(${target} PUBLIC ${target}_kernels)
  else()
    # The kernels are host C++ here; CANN's CPU-debug mode builds them the same way.
    target_sources(${target} PRIVATE ${source})
  endif()
endfunction()
