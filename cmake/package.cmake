# SPDX-License-Identifier: Apache-2.0
# The installed package: find_package(blume) (CMake) and pkg-config (blume.pc) for the header-only library,
# and `cpack -G DEB` for a Debian package of the library, the tool, its man page and bash completion, and
# the Redis module. tests/package/ installs both ways and builds a program against what was installed.
include(CMakePackageConfigHelpers)
install(DIRECTORY include/blume DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/generated/blume/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blume)
install(TARGETS blume EXPORT blumeTargets)
install(EXPORT blumeTargets NAMESPACE blume:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/blume)
configure_package_config_file(cmake/blumeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/blumeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/blume)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/blumeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/blumeConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/blumeConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/blume)

# The library has no architecture-specific files, so its .pc goes to share/pkgconfig and finds its prefix
# relative to itself: the same file works under /usr, /usr/local or an unpacked scratch root.
file(RELATIVE_PATH blume_pc_to_prefix "/prefix/${CMAKE_INSTALL_DATADIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" blume_pc_to_prefix "${blume_pc_to_prefix}")
configure_file(cmake/blume.pc.in ${CMAKE_CURRENT_BINARY_DIR}/blume.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/blume.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME blume)

set(CPACK_PACKAGE_CONTACT "the blume developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "The blume C++20 header-only library of probabilistic membership filters \
(Bloom, counting, blocked, cuckoo, quotient, xor and the rest of the family), the blume command-line \
tool that keeps filters in files, and a Redis module compatible with RedisBloom.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# Run-time libraries from the binaries themselves (dpkg-shlibdeps); the headers need xxhash.h besides.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libxxhash-dev (>= 0.8)")
# Everything but the Python component (pip or `cmake --install` install that, for the interpreter it is for).
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_CURRENT_BINARY_DIR};blume;Unspecified;/")
include(CPack)

# The consumer is configured by a plain host cmake (a cross build would test the host, not its target) and
# built without sanitizers, so the release build runs these tests.
if(BLUME_BUILD_TESTS AND NOT CMAKE_CROSSCOMPILING AND NOT BLUME_SANITIZED)
  set(blume_package_test ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DVERSION=${PROJECT_VERSION}
      -DSOURCE_DIR=${CMAKE_SOURCE_DIR}/tests/package)
  add_test(NAME package.install COMMAND ${blume_package_test} -DMODE=install
           -DWORK_DIR=${CMAKE_BINARY_DIR}/package-install -P ${CMAKE_SOURCE_DIR}/tests/package/run.cmake)
  # The Debian package checks for the tool, its man page and the Redis module, so it needs all three.
  find_program(BLUME_DPKG_DEB dpkg-deb)
  if(BLUME_DPKG_DEB AND TARGET blume_cli AND TARGET blume_man AND TARGET blume_redis)
    add_test(NAME package.deb COMMAND ${blume_package_test} -DMODE=deb
             -DWORK_DIR=${CMAKE_BINARY_DIR}/package-deb -P ${CMAKE_SOURCE_DIR}/tests/package/run.cmake)
  endif()
endif()
