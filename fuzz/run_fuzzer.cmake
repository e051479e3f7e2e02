# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer harness for a bounded time over a working copy of its seed corpus (see
# CMakeLists.txt): -DFUZZER, -DSEEDS (the committed corpus), -DWORK (a build-tree directory), -DSECONDS,
# -DTIMEOUT, -DMALLOC_LIMIT_MB. The working corpus keeps what earlier runs found; the seeds are copied
# over it each time, so a changed seed is picked up.
foreach(var FUZZER SEEDS WORK SECONDS TIMEOUT MALLOC_LIMIT_MB)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${var}= is required")
  endif()
endforeach()
if(NOT IS_DIRECTORY "${SEEDS}")
  message(FATAL_ERROR "no seed corpus at ${SEEDS}")
endif()
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(COPY "${SEEDS}/" DESTINATION "${WORK}/corpus")
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -timeout=${TIMEOUT} -malloc_limit_mb=${MALLOC_LIMIT_MB}
          -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ "${WORK}/corpus"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} found a problem (exit ${result}); the reproducer is in ${WORK}/artifacts/")
endif()
