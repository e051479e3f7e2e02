# SPDX-License-Identifier: Apache-2.0
# Generates blume.1 from the tool's own help (help2man), with every subcommand's --help in a section of
# its own, so the man page says exactly what --help says.
# In: BLUME (the built tool), HELP2MAN, OUT (the page to write), WORK (a scratch directory).
execute_process(COMMAND "${BLUME}" --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${BLUME} --help failed: ${rc}")
endif()
string(REGEX MATCH "Subcommands:\n(.*)" _ "${top}")
string(REGEX MATCHALL "\n  ([a-z]+) " names "\n${CMAKE_MATCH_1}")
set(include "[SUBCOMMANDS]\n")
foreach(entry IN LISTS names)
  string(STRIP "${entry}" name)
  execute_process(COMMAND "${BLUME}" ${name} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "${BLUME} ${name} --help failed: ${rc}")
  endif()
  string(REPLACE "\\" "\\\\" text "${text}")
  string(APPEND include ".SS \"blume ${name}\"\n.nf\n${text}.fi\n")
endforeach()
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/subcommands.h2m" "${include}")
execute_process(COMMAND "${HELP2MAN}" --no-info --section=1
                        "--name=probabilistic membership filters (Bloom filters and their family) as files"
                        "--include=${WORK}/subcommands.h2m" "--output=${OUT}" "${BLUME}"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "help2man failed: ${rc}")
endif()
