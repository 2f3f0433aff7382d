# Fails when docs/ops.md differs from what `aotc ops --markdown` prints now.
# Usage: cmake -DAOTC=path/to/aotc -DDOC=docs/ops.md -P CheckGeneratedDoc.cmake
execute_process(COMMAND ${AOTC} ops --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "aotc ops --markdown failed (exit ${rc})")
endif()
file(READ ${DOC} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "${DOC} is stale: regenerate it with `build/aotc ops --markdown > docs/ops.md`")
endif()
