# aotc MLU toolchain and glue: CMake fragment included by every MLU package's CMakeLists.txt,
# after runtime_stub/runtime.cmake. Defines, once per CMake build however many packages include it:
#   aotc_mlu                    the CNRT glue (aotc_mlu.cpp) the model library links;
#   aotc_mlu_kernels(T SOURCE)  builds the kernel source SOURCE (.mlu) into target T.
#
# AOTC_MLU_TOOLCHAIN chooses how:
#   emulation (the default)  the host C++ compiler builds the kernels with AOTC_MLU_EMULATION
#                            against aotc's emulation of BANG C and CNRT (emulation/): the package
#                            runs on any machine with the chip's rules enforced. The on-chip
#                            capacities it enforces are these cache options (bytes; defaults: the
#                            MLU370's usable NRAM and WRAM per core and SRAM per cluster), passed
#                            to the code as macros of the same names:
#                              AOTC_MLU_NRAM_BYTES AOTC_MLU_WRAM_BYTES AOTC_MLU_SRAM_BYTES
#                            and the device memory, AOTC_MLU_DDR_BYTES. Lower them to model a
#                            smaller part: a kernel whose buffers no longer fit fails at run time
#                            with a status naming the kernel, the memory and the bytes.
#                            AOTC_MLU_NUMERICS picks the emulation's fp32 arithmetic: mlu370 (the
#                            default: 20 of 23 mantissa bits kept by truncation in additions and
#                            products, subnormal results flushed; modelled from public reports,
#                            not vendor data) or ieee.
#   cncc                     Cambricon's cncc compiles the kernels for the MLU370
#                            (--bang-mlu-arch=mtp_372) and the glue links cnrt. Needs Neuware:
#                            NEUWARE_HOME (default /usr/local/neuware).
#                            [Not tested by aotc's CI, which has no MLU: the kernel source is the
#                            same text the emulation builds.]
cmake_policy(SET CMP0077 NEW)
include(${CMAKE_CURRENT_LIST_DIR}/../npu/npu.cmake)

set(AOTC_MLU_TOOLCHAIN "emulation" CACHE STRING "How MLU kernels are built: emulation or cncc")
set_property(CACHE AOTC_MLU_TOOLCHAIN PROPERTY STRINGS emulation cncc)
set(AOTC_MLU_NUMERICS "mlu370" CACHE STRING "The emulation's fp32 arithmetic: mlu370 or ieee")
set_property(CACHE AOTC_MLU_NUMERICS PROPERTY STRINGS mlu370 ieee)
set(AOTC_MLU_NRAM_BYTES 655360 CACHE STRING "Emulated NRAM per core, bytes")
set(AOTC_MLU_WRAM_BYTES 1048576 CACHE STRING "Emulated WRAM per core, bytes")
set(AOTC_MLU_SRAM_BYTES 4063232 CACHE STRING "Emulated SRAM per cluster, bytes")
set(AOTC_MLU_DDR_BYTES 25769803776 CACHE STRING "Emulated device memory, bytes")
set(AOTC_MLU_ARCH "mtp_372" CACHE STRING "The architecture cncc compiles for")

if(NOT TARGET aotc_mlu)
  set(_aotc_mlu_dir ${CMAKE_CURRENT_LIST_DIR})
  if(AOTC_MLU_TOOLCHAIN STREQUAL "emulation")
    if(AOTC_MLU_NUMERICS STREQUAL "mlu370")
      set(_aotc_mlu_numerics AOTC_MLU_NUMERICS_MLU370)
    elseif(AOTC_MLU_NUMERICS STREQUAL "ieee")
      set(_aotc_mlu_numerics AOTC_MLU_NUMERICS_IEEE)
    else()
      message(FATAL_ERROR "AOTC_MLU_NUMERICS is '${AOTC_MLU_NUMERICS}': give mlu370 or ieee")
    endif()
    find_package(Threads REQUIRED)
    add_library(aotc_bang_emulation STATIC ${_aotc_mlu_dir}/emulation/aotc_bang_emulation.cpp)
    target_include_directories(aotc_bang_emulation PUBLIC ${_aotc_mlu_dir}/emulation)
    target_compile_definitions(aotc_bang_emulation PUBLIC
      AOTC_MLU_EMULATION
      ${_aotc_mlu_numerics}
      AOTC_MLU_NRAM_BYTES=${AOTC_MLU_NRAM_BYTES}
      AOTC_MLU_WRAM_BYTES=${AOTC_MLU_WRAM_BYTES}
      AOTC_MLU_SRAM_BYTES=${AOTC_MLU_SRAM_BYTES}
      AOTC_MLU_DDR_BYTES=${AOTC_MLU_DDR_BYTES}ULL)
    target_link_libraries(aotc_bang_emulation PUBLIC aotc_runtime Threads::Threads)
    set(_aotc_mlu_backend aotc_bang_emulation)
  elseif(AOTC_MLU_TOOLCHAIN STREQUAL "cncc")
    if(NOT NEUWARE_HOME)
      if(DEFINED ENV{NEUWARE_HOME})
        set(NEUWARE_HOME $ENV{NEUWARE_HOME})
      else()
        set(NEUWARE_HOME /usr/local/neuware)
      endif()
    endif()
    find_program(AOTC_CNCC cncc HINTS ${NEUWARE_HOME}/bin)
    if(NOT AOTC_CNCC)
      message(FATAL_ERROR "aotc MLU package: AOTC_MLU_TOOLCHAIN=cncc needs Cambricon Neuware's cncc: "
                          "set NEUWARE_HOME or put cncc on the PATH")
    endif()
    add_library(aotc_mlu_cnrt INTERFACE)
    target_include_directories(aotc_mlu_cnrt INTERFACE ${NEUWARE_HOME}/include)
    target_link_directories(aotc_mlu_cnrt INTERFACE ${NEUWARE_HOME}/lib64)
    target_link_libraries(aotc_mlu_cnrt INTERFACE cnrt aotc_runtime)
    set(_aotc_mlu_backend aotc_mlu_cnrt)
  else()
    message(FATAL_ERROR "AOTC_MLU_TOOLCHAIN is '${AOTC_MLU_TOOLCHAIN}': give emulation or cncc")
  endif()
  aotc_npu_glue(aotc_mlu ${_aotc_mlu_dir}/aotc_mlu.cpp ${_aotc_mlu_backend})
endif()

function(aotc_mlu_kernels target source)
  get_filename_component(_name ${source} NAME_WE)
  if(AOTC_MLU_TOOLCHAIN STREQUAL "cncc")
    set(_object ${CMAKE_CURRENT_BINARY_DIR}/${_name}.o)
    add_custom_command(OUTPUT ${_object}
      COMMAND ${AOTC_CNCC} -c --bang-mlu-arch=${AOTC_MLU_ARCH} -O3 -fPIC
              -I${NEUWARE_HOME}/include ${source} -o ${_object}
      DEPENDS ${source} COMMENT "cncc ${_name}.mlu")
    target_sources(${target} PRIVATE ${_object})
  else()
    # The kernels are host C++ here: a translation unit that includes the .mlu file.
    set(_unit ${CMAKE_CURRENT_BINARY_DIR}/${_name}_emulated.cpp)
    file(WRITE ${_unit} "// The BANG C kernels of ${source}, built against aotc's emulation.\n#include \"${source}\"\n")
    target_sources(${target} PRIVATE ${_unit})
    set_source_files_properties(${_unit} PROPERTIES OBJECT_DEPENDS ${source})
  endif()
endfunction()
