# TileGen.cmake: add_tile_kernels() and tilegen_install_kernels(), for a tilegen source tree
# (add_subdirectory / tilegen's own tests) and for an installed package (find_package(TileGen),
# whose TileGenConfig.cmake includes this file). Reference: docs/cmake.md.
#
#   add_tile_kernels(<lib>
#     SPECS <spec.yaml>...            kernel specs (relative to the current source dir)
#     TARGETS <target>...             e.g. c c_avx2 c_avx512 (`tilegen targets` lists them)
#     [OUTPUT_DIR <dir>]              where generated sources go
#                                     (default: ${CMAKE_CURRENT_BINARY_DIR}/<lib>_tilegen)
#     [STATIC | SHARED])              library type (default: BUILD_SHARED_LIBS)
#
# How it works: at configure time `tilegen outputs` names the files a generation will write
# (and the compiler flags of each target), so that CMake knows the library's sources; at build
# time one custom command runs `tilegen generate`, re-run only when a spec or the generator
# changed. tilegen leaves unchanged files untouched, and the command is restat'ed, so an
# unchanged output recompiles nothing.
include_guard(GLOBAL)
include(GNUInstallDirs)

# A global property, not a variable: add_tile_kernels() may be called from a parent directory
# of the one that included this file (add_subdirectory(tilegen) from a user's project).
set_property(GLOBAL PROPERTY TILEGEN_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

# The tilegen that runs at build time: a target name (TileGen::tilegen, imported from the
# package, or the in-tree `tilegen`), and an executable CMake can run now, at configure time.
function(_tilegen_tools out_target out_exe)
  if(NOT TARGET TileGen::tilegen)
    message(FATAL_ERROR "add_tile_kernels: no tilegen executable; use find_package(TileGen) "
                        "or add_subdirectory(<tilegen source dir>) first")
  endif()
  get_target_property(aliased TileGen::tilegen ALIASED_TARGET)
  get_target_property(imported TileGen::tilegen IMPORTED)
  if(aliased)
    set(tgt ${aliased})
  else()
    set(tgt TileGen::tilegen)
  endif()

  if(TILEGEN_HOST_EXECUTABLE)
    # Given explicitly (cross-compiling, or to skip the host build below).
    set(exe "${TILEGEN_HOST_EXECUTABLE}")
  elseif(imported)
    get_target_property(exe TileGen::tilegen LOCATION)
  else()
    _tilegen_build_host_tool(exe)
  endif()
  set(${out_target} ${tgt} PARENT_SCOPE)
  set(${out_exe} "${exe}" PARENT_SCOPE)
endfunction()

# In a source tree the `tilegen` target is not built yet when CMake configures, but the file
# list must be known now. So build a host copy of tilegen once per configure run, in
# ${CMAKE_BINARY_DIR}/_tilegen_host (incremental: later configures only rebuild what changed).
# The build-time generation still uses the real `tilegen` target. The copy is built without
# optimization (build type None): listing outputs is cheap, compiling with -O2 is not.
function(_tilegen_build_host_tool out_exe)
  set(host_dir "${CMAKE_BINARY_DIR}/_tilegen_host")
  set(exe "${host_dir}/generator/tools/tilegen")
  get_property(done GLOBAL PROPERTY _TILEGEN_HOST_BUILT)
  if(NOT done)
    get_property(cmake_dir GLOBAL PROPERTY TILEGEN_CMAKE_DIR)
    get_filename_component(src "${cmake_dir}/.." ABSOLUTE)
    message(STATUS "tilegen: building a host tilegen for configure-time output lists")
    set(gen_args -G "${CMAKE_GENERATOR}")
    if(CMAKE_MAKE_PROGRAM)
      list(APPEND gen_args "-DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}")
    endif()
    execute_process(
      COMMAND "${CMAKE_COMMAND}" -S "${src}" -B "${host_dir}" ${gen_args}
              -DCMAKE_BUILD_TYPE=None -DTILEGEN_BUILD_TESTS=OFF -DTILEGEN_BUILD_BENCH=OFF
              -DTILEGEN_HOST_BUILD=ON
              "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}" "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(rc EQUAL 0)
      execute_process(COMMAND "${CMAKE_COMMAND}" --build "${host_dir}" --target tilegen
                      RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    endif()
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "tilegen: building the host tilegen in ${host_dir} failed:\n${log}")
    endif()
    set_property(GLOBAL PROPERTY _TILEGEN_HOST_BUILT TRUE)
  endif()
  set(${out_exe} "${exe}" PARENT_SCOPE)
endfunction()

function(add_tile_kernels lib)
  cmake_parse_arguments(PARSE_ARGV 1 arg "STATIC;SHARED" "OUTPUT_DIR" "SPECS;TARGETS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_tile_kernels(${lib}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SPECS)
    message(FATAL_ERROR "add_tile_kernels(${lib}): SPECS <spec.yaml>... is required")
  endif()
  if(NOT arg_TARGETS)
    message(FATAL_ERROR "add_tile_kernels(${lib}): TARGETS <target>... is required "
                        "(e.g. TARGETS c c_avx2 c_avx512)")
  endif()
  if(arg_STATIC AND arg_SHARED)
    message(FATAL_ERROR "add_tile_kernels(${lib}): give STATIC or SHARED, not both")
  endif()
  if(TILEGEN_HOST_BUILD)
    message(FATAL_ERROR "add_tile_kernels() called inside the host tilegen build")
  endif()
  set(type "")
  if(arg_STATIC)
    set(type STATIC)
  elseif(arg_SHARED)
    set(type SHARED)
  endif()
  set(out_dir "${arg_OUTPUT_DIR}")
  if(NOT out_dir)
    set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${lib}_tilegen")
  endif()
  get_filename_component(out_dir "${out_dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  # Specs are passed relative to the top-level source dir when they lie inside it, so that the
  # spec paths in generated comments do not depend on where the tree is checked out (and
  # compiler caches hit across checkouts). tilegen runs in that dir.
  set(specs_abs "")
  set(specs_arg "")
  foreach(spec IN LISTS arg_SPECS)
    get_filename_component(abs "${spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${abs}")
      message(FATAL_ERROR "add_tile_kernels(${lib}): spec file not found: ${abs}")
    endif()
    file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${abs}")
    if(rel MATCHES "^\\.\\./")
      set(rel "${abs}")
    endif()
    list(APPEND specs_abs "${abs}")
    list(APPEND specs_arg "${rel}")
  endforeach()
  list(JOIN arg_TARGETS "," targets_csv)

  _tilegen_tools(tool_target tool_exe)

  # Configure time: the file list and the per-target flags. Re-run when a spec changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${specs_abs})
  execute_process(
    COMMAND "${tool_exe}" outputs --lib ${lib} --targets ${targets_csv} --format=cmake
            ${specs_arg}
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "add_tile_kernels(${lib}): tilegen rejected the arguments or specs "
                        "(exit ${rc}):\n${errors}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(header "")
  set(sources "")
  set(variants "")
  set(outputs "")
  foreach(line IN LISTS lines)
    if(line STREQUAL "")
      continue()
    endif()
    string(REPLACE " " ";" fields "${line}")
    list(GET fields 0 kind)
    if(kind STREQUAL "header")
      list(GET fields 1 f)
      set(header "${out_dir}/${f}")
      list(APPEND outputs "${out_dir}/${f}")
    elseif(kind STREQUAL "source")
      list(GET fields 1 f)
      list(APPEND sources "${out_dir}/${f}")
      list(APPEND outputs "${out_dir}/${f}")
    elseif(kind STREQUAL "variant")
      list(GET fields 1 t)
      list(GET fields 2 f)
      list(APPEND variants "${out_dir}/${f}")
      list(APPEND _tg_files_${t} "${out_dir}/${f}")
      list(APPEND outputs "${out_dir}/${f}")
    elseif(kind STREQUAL "flags")
      list(GET fields 1 t)
      set(_tg_flags_${t} "")
      list(LENGTH fields n)
      if(n GREATER 2)
        list(SUBLIST fields 2 -1 _tg_flags_${t})
      endif()
    endif()
  endforeach()
  list(LENGTH variants n_variants)

  # Build time: one generation step for the whole library.
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "$<TARGET_FILE:${tool_target}>" generate --lib ${lib} --targets ${targets_csv}
            --out "${out_dir}" ${specs_arg}
    DEPENDS ${specs_abs} ${tool_target}
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    COMMENT "tilegen: generating ${lib} (${n_variants} variants for ${targets_csv})"
    VERBATIM)

  foreach(t IN LISTS arg_TARGETS)
    if(_tg_files_${t})
      # Variants are hot loops: -O3 whatever the build type, plus the target's ISA flags.
      set_source_files_properties(${_tg_files_${t}} PROPERTIES
        COMPILE_OPTIONS "-O3;${_tg_flags_${t}}")
    endif()
  endforeach()

  if(NOT TARGET OpenMP::OpenMP_C)
    find_package(OpenMP REQUIRED COMPONENTS C)
  endif()
  add_library(${lib} ${type} ${header} ${sources} ${variants})
  target_include_directories(${lib} PUBLIC
    "$<BUILD_INTERFACE:${out_dir}>" "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  target_link_libraries(${lib} PUBLIC TileGen::runtime PRIVATE OpenMP::OpenMP_C)
  if(UNIX)
    target_link_libraries(${lib} PRIVATE m)
  endif()
  set_target_properties(${lib} PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON
    TILEGEN_HEADER "${header}" TILEGEN_OUTPUT_DIR "${out_dir}")
endfunction()

# tilegen_install_kernels(<lib> [EXPORT <export-set>] [INCLUDE_DESTINATION <dir>]):
# installs a library made by add_tile_kernels() and its header (default: include/), adding it
# to <export-set> if given. Consumers of the export need find_dependency(TileGen) and
# find_dependency(OpenMP) in the package config; docs/cmake.md shows a complete example.
function(tilegen_install_kernels lib)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPORT;INCLUDE_DESTINATION" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tilegen_install_kernels(${lib}): unknown arguments: "
                        "${arg_UNPARSED_ARGUMENTS}")
  endif()
  get_target_property(header ${lib} TILEGEN_HEADER)
  if(NOT header)
    message(FATAL_ERROR "tilegen_install_kernels: ${lib} was not made by add_tile_kernels()")
  endif()
  include(GNUInstallDirs)
  set(inc "${arg_INCLUDE_DESTINATION}")
  if(NOT inc)
    set(inc "${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  set(export_args "")
  if(arg_EXPORT)
    set(export_args EXPORT ${arg_EXPORT})
  endif()
  install(TARGETS ${lib} ${export_args}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${inc})
  install(FILES "${header}" DESTINATION ${inc})
endfunction()
