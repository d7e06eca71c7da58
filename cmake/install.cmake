# SPDX-License-Identifier: BSD-2-Clause
# Install rules, the CMake package (find_package(mmaemu) -> mmaemu::emulator, mmaemu::recordings,
# mmaemu::reports, mmaemu::harness, mmaemu::mmaemu) and the CPack tarball that T7 validates.
# Layout of an install prefix:
#   bin/mmaemu                      the command line
#   lib/libmmaemu_*.a               the libraries
#   include/mmaemu/<area>/*.hpp     their public headers
#   lib/cmake/mmaemu/               mmaemuConfig.cmake, mmaemuConfigVersion.cmake, mmaemuTargets.cmake
#   share/mmaemu/tiers/             tier declarations (the installed mmaemu reads them)
#   share/mmaemu/recordings/        the committed hardware recordings (T1 by the installed mmaemu)
#   share/mmaemu/kernels/bin/       the release fatbins and manifest.json
#   share/mmaemu/keys/              trusted public keys of validation logs
#   share/doc/mmaemu/               README and docs
include(CMakePackageConfigHelpers)

set(MMAEMU_INSTALL_CMAKEDIR lib/cmake/mmaemu)
set(_mmaemu_export_names
  mmaemu_outcome outcome
  mmaemu_support support
  mmaemu_emulator emulator
  mmaemu_kernels kernels
  mmaemu_replay replay
  mmaemu_recordings recordings
  mmaemu_reports reports
  mmaemu_mutants mutants
  mmaemu_harness harness)
set(_mmaemu_libs "")
while(_mmaemu_export_names)
  list(POP_FRONT _mmaemu_export_names _target _export)
  if(TARGET ${_target})
    set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_export})
    list(APPEND _mmaemu_libs ${_target})
  endif()
endwhile()

install(TARGETS ${_mmaemu_libs} mmaemu
  EXPORT mmaemuTargets
  RUNTIME DESTINATION bin
  LIBRARY DESTINATION lib
  ARCHIVE DESTINATION lib
  INCLUDES DESTINATION include)
foreach(_area outcome support emulator kernels recordings reports mutants harness/replay harness/tiers)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_area}/include)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_area}/include/ DESTINATION include
      FILES_MATCHING PATTERN "*.hpp")
  endif()
endforeach()

install(EXPORT mmaemuTargets NAMESPACE mmaemu:: DESTINATION ${MMAEMU_INSTALL_CMAKEDIR}
  FILE mmaemuTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mmaemuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mmaemuConfig.cmake
  INSTALL_DESTINATION ${MMAEMU_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mmaemuConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mmaemuConfig.cmake ${PROJECT_BINARY_DIR}/mmaemuConfigVersion.cmake
  DESTINATION ${MMAEMU_INSTALL_CMAKEDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/tiers/ DESTINATION share/mmaemu/tiers
  FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/recordings/data/ DESTINATION share/mmaemu/recordings)
# The release fatbins and their manifest (fatbin_dir() looks in <prefix>/share/mmaemu/kernels/bin).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/bin/ DESTINATION share/mmaemu/kernels/bin)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/validation_logs/keys/ DESTINATION share/mmaemu/keys
  FILES_MATCHING PATTERN "*.pub" PATTERN "README.md")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/mmaemu)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/mmaemu
  FILES_MATCHING PATTERN "*.md" PATTERN "validation_logs" EXCLUDE)

set(CPACK_PACKAGE_NAME mmaemu)
set(CPACK_PACKAGE_VENDOR "mmaemu")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_FILE_NAME "mmaemu-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_GENERATOR TGZ)
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_CHECKSUM SHA256)
include(CPack)
