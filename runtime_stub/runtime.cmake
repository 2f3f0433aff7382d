# aotc runtime stub: CMake fragment included by every generated package's CMakeLists.txt.
#
# Defines two static libraries, once per CMake build however many packages include this file:
#   aotc_runtime  status strings, weight loading, timer, the dispatcher of bucketed packages
#                 (C99; what the model library needs)
#   aotc_runner   the <name>_run program's main (C++17 + aotc_tensor_proto.c); links aotc_runtime
# and, only for packages compiled with --threads N > 1 (they set AOTC_RUNTIME_WITH_THREADS):
#   aotc_threads  the thread pool (aotc_threads.c, C99 + pthreads)
#
# zstd-compressed weights: a package compiled with --compress-weights does
#   set(AOTC_RUNTIME_WITH_ZSTD ON)
#   include(runtime_stub/runtime.cmake)
# When hundreds of packages are add_subdirectory'd into one super-project, the first include
# defines the targets from its own folder, and packages may disagree about zstd. Rather than
# building two variants, zstd support is switched on for the one shared aotc_runtime as soon as
# any package asks for it: the stub detects compression by the file's magic number, so packages
# with raw weights are unaffected, and the only cost is linking libzstd into their runners.
#
# The including project must enable C and CXX (project(<name> LANGUAGES C CXX)).

# option() must honour a plain variable set by the package (CMP0077), and target_link_libraries
# must accept the shared target when a later package, in another folder, upgrades it (CMP0079).
# include() pushes a policy scope, so these settings stay local to this file.
cmake_policy(SET CMP0077 NEW)
cmake_policy(SET CMP0079 NEW)

option(AOTC_RUNTIME_WITH_ZSTD "Decompress zstd-compressed aotc weights files (needs libzstd)" OFF)

get_property(_aotc_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "C" IN_LIST _aotc_languages OR NOT "CXX" IN_LIST _aotc_languages)
  message(FATAL_ERROR "aotc runtime: the project including ${CMAKE_CURRENT_LIST_FILE} must "
                      "enable both C and CXX, e.g. project(<name> LANGUAGES C CXX)")
endif()

if(NOT TARGET aotc_runtime)
  set(_aotc_stub_dir ${CMAKE_CURRENT_LIST_DIR})
  add_library(aotc_runtime STATIC ${_aotc_stub_dir}/aotc_runtime.c ${_aotc_stub_dir}/aotc_buckets.c)
  add_library(aotc_runner STATIC ${_aotc_stub_dir}/aotc_runner.cpp
                                 ${_aotc_stub_dir}/aotc_tensor_proto.c)
  target_include_directories(aotc_runtime PUBLIC ${_aotc_stub_dir})
  target_link_libraries(aotc_runner PUBLIC aotc_runtime)
  foreach(_aotc_target aotc_runtime aotc_runner)
    # C99 and C++17 so that the stub builds with older vendor toolchains than aotc itself needs.
    # PIC because a package may link the model into a shared library.
    set_target_properties(${_aotc_target} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                          C_EXTENSIONS OFF CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                          CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${_aotc_target} PRIVATE
                           $<$<COMPILE_LANG_AND_ID:C,GNU,Clang,AppleClang>:-O2 -Wall -Wextra>
                           $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang>:-O2 -Wall -Wextra>)
  endforeach()
  set_property(GLOBAL PROPERTY AOTC_RUNTIME_HAS_ZSTD FALSE)
endif()

get_property(_aotc_has_zstd GLOBAL PROPERTY AOTC_RUNTIME_HAS_ZSTD)
if(AOTC_RUNTIME_WITH_ZSTD AND NOT _aotc_has_zstd)
  find_path(AOTC_ZSTD_INCLUDE_DIR zstd.h)
  find_library(AOTC_ZSTD_LIBRARY NAMES zstd libzstd zstd_static)
  if(NOT AOTC_ZSTD_INCLUDE_DIR OR NOT AOTC_ZSTD_LIBRARY)
    message(FATAL_ERROR "aotc runtime: this package's weights are zstd-compressed "
                        "(AOTC_RUNTIME_WITH_ZSTD=ON) but libzstd was not found. Install it "
                        "(Debian: libzstd-dev) or set AOTC_ZSTD_INCLUDE_DIR and AOTC_ZSTD_LIBRARY.")
  endif()
  target_compile_definitions(aotc_runtime PRIVATE AOTC_RUNTIME_WITH_ZSTD)
  target_include_directories(aotc_runtime PRIVATE ${AOTC_ZSTD_INCLUDE_DIR})
  target_link_libraries(aotc_runtime PUBLIC ${AOTC_ZSTD_LIBRARY})
  set_property(GLOBAL PROPERTY AOTC_RUNTIME_HAS_ZSTD TRUE)
endif()

# The thread pool: only packages compiled for several threads link it, so single-threaded ones
# pull in no threads at all.
if(AOTC_RUNTIME_WITH_THREADS AND NOT TARGET aotc_threads)
  find_package(Threads REQUIRED)
  add_library(aotc_threads STATIC ${CMAKE_CURRENT_LIST_DIR}/aotc_threads.c)
  target_include_directories(aotc_threads PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(aotc_threads PUBLIC aotc_runtime Threads::Threads)
  set_target_properties(aotc_threads PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                        C_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(aotc_threads PRIVATE $<$<C_COMPILER_ID:GNU,Clang,AppleClang>:-O2 -Wall -Wextra>)
endif()
