# aotc NPU glue: CMake fragment shared by every NPU package's chip fragment (ascendc/ascendc.cmake,
# bang/bang.cmake, tiled/tiled.cmake), copied into the package as npu/. Defines
#   aotc_npu_glue(NAME SOURCE BACKEND)  the chip's glue library NAME from SOURCE (a Driver over the
#                                       shared npu/aotc_npu_glue.h) on BACKEND (the emulation
#                                       library or the vendor runtime's interface target), with
#                                       the compile settings every chip library shares.
# The folder of this file, for the glue header (a cache entry: functions see it from any scope).
set(AOTC_NPU_GLUE_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL "aotc's shared NPU glue")
if(NOT COMMAND aotc_npu_glue)
  function(aotc_npu_glue name source backend)
    add_library(${name} STATIC ${source})
    get_filename_component(_dir ${source} DIRECTORY)
    target_include_directories(${name} PUBLIC ${_dir} ${AOTC_NPU_GLUE_DIR})
    target_link_libraries(${name} PUBLIC ${backend})
    foreach(_t ${name} ${backend})
      get_target_property(_type ${_t} TYPE)
      if(NOT _type STREQUAL "INTERFACE_LIBRARY")
        set_target_properties(${_t} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                              CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
        target_compile_options(${_t} PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-O2 -Wall -Wextra>)
      endif()
    endforeach()
  endfunction()
endif()
