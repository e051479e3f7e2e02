# SPDX-License-Identifier: Apache-2.0
# What the sanitized builds need to know about their compiler's sanitizer runtime.

# BLUME_SANITIZED is true when the build's flags turn on a sanitizer: tests then run smaller where their size
# only tightens a statistical bound (see tests/test_support.hpp, blume::test::scaled).
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
  set(BLUME_SANITIZED TRUE)
else()
  set(BLUME_SANITIZED FALSE)
endif()

# The compiler's shared AddressSanitizer runtime, for processes that are not ours (python3, redis-server)
# loading a module we built with ASan: it must be preloaded, before the process's own allocator. GCC's is
# libasan.so; clang's is named for the target architecture (and carries UBSan's handlers too).
function(blume_asan_runtime out)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(name libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
  else()
    set(name libasan.so)
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${name}
                  OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${path}" OR NOT EXISTS "${path}")
    message(FATAL_ERROR "${CMAKE_CXX_COMPILER} has no shared ASan runtime ${name} (Debian: libclang-rt-14-dev)")
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()
