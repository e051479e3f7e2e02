# SPDX-License-Identifier: Apache-2.0
# Installs blume from BUILD_DIR into a scratch root, then builds and runs a program against what was
# installed, found both by find_package(blume) and by pkg-config.
#   MODE=install  cmake --install into WORK_DIR/root/usr
#   MODE=deb      cpack -G DEB, then the package unpacked with dpkg-deb into WORK_DIR/root (no dpkg database,
#                 no root needed), its file list checked, and its blume tool run
# VERSION is the project's version: the consumer prints what the installed headers say, and it must match.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(root "${WORK_DIR}/root")
if(MODE STREQUAL "deb")
  run(cpack -G DEB --config "${BUILD_DIR}/CPackConfig.cmake" -B "${WORK_DIR}/deb")
  file(GLOB deb "${WORK_DIR}/deb/*.deb")
  run(dpkg-deb --field "${deb}" Package Version Depends)
  message(STATUS "${deb}:\n${out}")
  if(NOT out MATCHES "Version: ${VERSION}")
    message(FATAL_ERROR "the package's version is not ${VERSION}")
  endif()
  run(dpkg-deb --contents "${deb}")
  foreach(expected usr/bin/blume usr/share/man/man1/blume.1 usr/share/bash-completion/completions/blume
                   usr/include/blume/blume.hpp usr/include/blume/version.hpp usr/include/blume/kinds/bloom_filter.hpp
                   usr/lib/cmake/blume/blumeConfig.cmake usr/share/pkgconfig/blume.pc usr/lib/blume/blume_redis.so)
    string(FIND "${out}" "./${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "the package lacks ${expected}:\n${out}")
    endif()
  endforeach()
  if(out MATCHES "dist-packages|site-packages")
    message(FATAL_ERROR "the package holds the Python module, which belongs to pip or cmake --install:\n${out}")
  endif()
  run(dpkg-deb -x "${deb}" "${root}")
  run("${root}/usr/bin/blume" --version)
  if(NOT out MATCHES "^blume ${VERSION} ")
    message(FATAL_ERROR "the packaged tool says '${out}', not blume ${VERSION}")
  endif()
else()
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${root}/usr")
endif()

# find_package(blume), as a CMake project would.
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/consumer" -G Ninja "-DCMAKE_PREFIX_PATH=${root}/usr")
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
run("${WORK_DIR}/consumer/consumer")
if(NOT out STREQUAL "${VERSION}\n")
  message(FATAL_ERROR "the consumer built with find_package reports version '${out}', not ${VERSION}")
endif()

# pkg-config, as a Makefile would: the .pc file finds its prefix relative to itself.
set(ENV{PKG_CONFIG_PATH} "${root}/usr/share/pkgconfig")
run(pkg-config --modversion blume)
if(NOT out STREQUAL "${VERSION}\n")
  message(FATAL_ERROR "pkg-config --modversion blume says '${out}', not ${VERSION}")
endif()
run(pkg-config --cflags --libs blume)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(c++ -std=c++20 -O1 "${SOURCE_DIR}/main.cpp" ${flags} -o "${WORK_DIR}/consumer-pc")
run("${WORK_DIR}/consumer-pc")
if(NOT out STREQUAL "${VERSION}\n")
  message(FATAL_ERROR "the consumer built with pkg-config reports version '${out}', not ${VERSION}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
