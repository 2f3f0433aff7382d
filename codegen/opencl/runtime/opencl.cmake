# aotc OpenCL glue: CMake fragment included by every OpenCL package's CMakeLists.txt, after
# runtime_stub/runtime.cmake. Defines, once per CMake build however many packages include it:
#   aotc_opencl                         static library running device modules (aotc_opencl.c);
#   aotc_opencl_embed_source(T F SYM)   compiles kernel source file F into target T as the C
#                                       string SYM, so the program needs no file at run time.
# Needs OpenCL headers and an ICD loader (Debian: opencl-headers ocl-icd-opencl-dev) to build,
# and an OpenCL driver to run (e.g. pocl-opencl-icd for the CPU).
find_package(OpenCL REQUIRED)

if(NOT TARGET aotc_opencl)
  add_library(aotc_opencl STATIC ${CMAKE_CURRENT_LIST_DIR}/aotc_opencl.c)
  target_include_directories(aotc_opencl PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_compile_definitions(aotc_opencl PUBLIC CL_TARGET_OPENCL_VERSION=120)
  target_link_libraries(aotc_opencl PUBLIC aotc_runtime OpenCL::OpenCL)
  set_target_properties(aotc_opencl PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                        C_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(aotc_opencl PRIVATE $<$<C_COMPILER_ID:GNU,Clang,AppleClang>:-O2 -Wall -Wextra>)
  set_property(GLOBAL PROPERTY AOTC_OPENCL_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_source.cmake)
endif()

function(aotc_opencl_embed_source target source symbol)
  get_property(_script GLOBAL PROPERTY AOTC_OPENCL_EMBED_SCRIPT)
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/${symbol}.c)
  add_custom_command(OUTPUT ${_out}
                     COMMAND ${CMAKE_COMMAND} -DSOURCE=${source} -DOUTPUT=${_out} -DSYMBOL=${symbol}
                             -P ${_script}
                     DEPENDS ${source} ${_script}
                     COMMENT "Embedding ${source} as ${symbol}" VERBATIM)
  target_sources(${target} PRIVATE ${_out})
endfunction()
