# TileGen.cmake: add_tile_kernels() and tilegen_install_kernels(), for a tilegen source tree
# (add_subdirectory / tilegen's own tests) and for an installed package (find_package(TileGen),
# whose TileGenConfig.cmake includes this file). Reference: docs/cmake.md.
#
#   add_tile_kernels(<lib>
#     SPECS <spec.yaml>...            kernel specs (relative to the current source dir)
#     [TARGETS <target>...]           e.g. sm_80 sm_90 c c_avx2 c_avx512 (`tilegen targets`).
#                                     Default: the C targets of the host processor, plus, when
#                                     the CUDA language is enabled, the CUDA targets named by
#                                     CMAKE_CUDA_ARCHITECTURES, and when the HIP language is
#                                     enabled, the HIP targets named by CMAKE_HIP_ARCHITECTURES
#     [OUTPUT_DIR <dir>]              where generated sources go
#                                     (default: ${CMAKE_CURRENT_BINARY_DIR}/<lib>_tilegen)
#     [STATIC | SHARED]               library type (default: BUILD_SHARED_LIBS)
#     [TUNING_DB <file.json>]         configurations measured by `tilegen tune` (docs/tune.md);
#                                     a build dependency: editing it regenerates the library
#     [TORCH])                        also the PyTorch extension <lib>_torch (docs/torch.md)
#
# How it works: at configure time `tilegen outputs` names the files a generation will write
# (and the compiler flags of each target), so that CMake knows the library's sources; at build
# time one custom command runs `tilegen generate`, re-run only when a spec or the generator
# changed. tilegen leaves unchanged files untouched, and the command is restat'ed, so an
# unchanged output recompiles nothing. CUDA targets (block "CUDA targets" below): the CUDA
# language is enabled when a CUDA target is listed, each target's .cu variants are compiled
# for its own architecture in an OBJECT library, and the library links TileGen::runtime_cuda.
# HIP targets (block "HIP targets" below, docs/hip.md): no HIP language and no AMD GPU needed;
# each .hip variant's device pass becomes one code object per AMD arch (hipcc or clang-19, as
# the target table says), embedded into its host pass (the C++ compiler), and the library links
# TileGen::runtime_hip, which loads libamdhip64 at run time.
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
# The same copy generates at build time (_tilegen_generator below), kept current by a build step.
# It is built without optimization (build type None): generating is cheap, compiling tilegen
# with -O2 is not.
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
    set_property(GLOBAL PROPERTY _TILEGEN_HOST_BUILT "${exe}") # its executable (_tilegen_generator)
  endif()
  set(${out_exe} "${exe}" PARENT_SCOPE)
endfunction()

# _tilegen_generator(<out_command> <out_depends>): the tilegen that build-time generation runs,
# as a COMMAND word and the DEPENDS that make a generation step re-run when it changes. An
# installed package's tilegen and the in-tree target (with TILEGEN_HOST_EXECUTABLE, and in
# tilegen's own tree, which builds that target anyway) run as themselves. Where add_tile_kernels
# built a host copy at configure time for a project that added tilegen's source tree with
# add_subdirectory, that copy generates at build time too, so the project compiles
# the generator once rather than twice (the in-tree `tilegen` target is built only when asked
# for): the step `tilegen_host` runs the copy's own incremental build before any generation
# whenever a file of tilegen's generator/ or runtime/include/ or a CMakeLists.txt is newer than
# its stamp, and a generation step depends on the copy's executable (re-run when it changed).
function(_tilegen_generator out_cmd out_deps)
  _tilegen_tools(tgt exe)
  get_property(host_exe GLOBAL PROPERTY _TILEGEN_HOST_BUILT)
  get_property(own_tree GLOBAL PROPERTY _TILEGEN_OWN_TREE)
  if(NOT host_exe OR NOT exe STREQUAL host_exe OR own_tree)
    set(${out_cmd} "$<TARGET_FILE:${tgt}>" PARENT_SCOPE)
    set(${out_deps} ${tgt} PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET tilegen_host)
    get_property(cmake_dir GLOBAL PROPERTY TILEGEN_CMAKE_DIR)
    get_filename_component(src "${cmake_dir}/.." ABSOLUTE)
    # (Not CONFIGURE_DEPENDS: that re-checks the globs on every build, so that no build is a
    # no-op. A file added to the generator comes with an edit of a CMakeLists.txt listed here.)
    file(GLOB_RECURSE inputs "${src}/generator/*" "${src}/runtime/include/*")
    list(APPEND inputs "${src}/CMakeLists.txt")
    set(stamp "${CMAKE_BINARY_DIR}/_tilegen_host/tilegen_host.stamp")
    add_custom_command(
      OUTPUT "${stamp}"
      BYPRODUCTS "${host_exe}"
      COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}/_tilegen_host" --target tilegen
      COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
      DEPENDS ${inputs}
      COMMENT "tilegen: updating the host tilegen"
      VERBATIM)
    add_custom_target(tilegen_host DEPENDS "${stamp}")
  endif()
  set(${out_cmd} "${host_exe}" PARENT_SCOPE)
  set(${out_deps} tilegen_host "${host_exe}" PARENT_SCOPE)
endfunction()

# ---- CUDA targets ------------------------------------------------------------------------------
# Which targets are CUDA ones is read from the target table (`tilegen targets`, backend column),
# once per configure run; the rest of tilegen's CMake code never matches target names.
function(_tilegen_target_backends tool_exe out_names out_backends)
  get_property(names GLOBAL PROPERTY _TILEGEN_TARGET_NAMES)
  get_property(backends GLOBAL PROPERTY _TILEGEN_TARGET_BACKENDS)
  if(NOT names)
    execute_process(COMMAND "${tool_exe}" targets RESULT_VARIABLE rc OUTPUT_VARIABLE table
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "tilegen: `${tool_exe} targets` failed (exit ${rc}):\n${err}")
    endif()
    string(REPLACE "\n" ";" lines "${table}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^([A-Za-z0-9_]+) +([a-z]+) +-?[0-9]+ ")
        list(APPEND names "${CMAKE_MATCH_1}")
        list(APPEND backends "${CMAKE_MATCH_2}")
      endif()
    endforeach()
    set_property(GLOBAL PROPERTY _TILEGEN_TARGET_NAMES "${names}")
    set_property(GLOBAL PROPERTY _TILEGEN_TARGET_BACKENDS "${backends}")
  endif()
  set(${out_names} "${names}" PARENT_SCOPE)
  set(${out_backends} "${backends}" PARENT_SCOPE)
endfunction()

# The CUDA architecture (CUDA_ARCHITECTURES entry) of a CUDA target: sm_80 -> 80 (SASS for
# sm_80 plus compute_80 PTX, so the variant also runs, JIT-compiled, on later GPUs); an
# arch-specific target, sm_90a -> 90a-real (SASS only: it runs on cc 9.0 alone, and dispatch
# selects it only there).
function(_tilegen_cuda_arch target out)
  if(NOT target MATCHES "^sm_([0-9]+)(a?)$")
    message(FATAL_ERROR "tilegen: CUDA target '${target}' is not named sm_<arch>[a]")
  endif()
  if(CMAKE_MATCH_2)
    set(${out} "${CMAKE_MATCH_1}a-real" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  endif()
endfunction()

# _tilegen_cpu_arch(<out>): the CPU architecture of CMAKE_SYSTEM_PROCESSOR in the target table's
# words (Target::cpu_arch): "x86", "aarch64", or "" for others (only the portable `c` there).
function(_tilegen_cpu_arch out)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|x64|x86|i[3-6]86)$")
    set(${out} "x86" PARENT_SCOPE)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(${out} "aarch64" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# _tilegen_plan_targets(<lib> <out_targets> <out_cuda> ARGS...): the TARGETS of a call of
# add_tile_kernels (its ARGS), defaulted when absent, and the CUDA targets among them.
function(_tilegen_plan_targets lib out_targets out_cuda)
  cmake_parse_arguments(PARSE_ARGV 3 arg "STATIC;SHARED;TORCH" "OUTPUT_DIR;TUNING_DB" "SPECS;TARGETS")
  if(TILEGEN_HOST_BUILD)
    message(FATAL_ERROR "add_tile_kernels() called inside the host tilegen build")
  endif()
  _tilegen_tools(tool_target tool_exe)
  _tilegen_target_backends("${tool_exe}" names backends)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(targets "${arg_TARGETS}")
  if(NOT targets)
    # The target processor's C targets (the processor of the toolchain: a cross build to
    # aarch64 gets the Arm ones) ...
    set(targets c)
    _tilegen_cpu_arch(cpu_arch)
    if(cpu_arch STREQUAL "x86" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|x64)$")
      list(APPEND targets c_avx2 c_avx512)
    elseif(cpu_arch STREQUAL "aarch64")
      list(APPEND targets c_neon c_sve)
    endif()
    # ... and, in a CUDA project, the CUDA targets CMAKE_CUDA_ARCHITECTURES names.
    if("CUDA" IN_LIST languages)
      set(cuda_rows "")
      foreach(name backend IN ZIP_LISTS names backends)
        if(backend STREQUAL "cuda")
          list(APPEND cuda_rows ${name})
        endif()
      endforeach()
      set(archs "${CMAKE_CUDA_ARCHITECTURES}")
      if(archs STREQUAL "native" AND DEFINED CMAKE_CUDA_ARCHITECTURES_NATIVE)
        set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
      endif()
      set(from_archs "")
      set(skipped "")
      foreach(a IN LISTS archs)
        string(REGEX REPLACE "-(real|virtual)$" "" a "${a}")
        if(a STREQUAL "all" OR a STREQUAL "all-major")
          foreach(row IN LISTS cuda_rows)
            if(a STREQUAL "all" OR row MATCHES "^sm_[0-9]+0$")
              list(APPEND from_archs ${row})
            endif()
          endforeach()
        elseif("sm_${a}" IN_LIST cuda_rows)
          list(APPEND from_archs "sm_${a}")
        elseif(NOT a MATCHES "^(OFF|FALSE|NO|0)?$")
          list(APPEND skipped "${a}")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES from_archs)
      string(REPLACE ";" " " skipped "${skipped}")
      string(REPLACE ";" " " cuda_rows "${cuda_rows}")
      if(skipped)
        message(WARNING "add_tile_kernels(${lib}): CMAKE_CUDA_ARCHITECTURES entries without a "
                        "tilegen target are skipped: ${skipped} (CUDA targets: ${cuda_rows})")
      endif()
      if(NOT from_archs)
        message(WARNING "add_tile_kernels(${lib}): CMAKE_CUDA_ARCHITECTURES "
                        "(${CMAKE_CUDA_ARCHITECTURES}) names no tilegen CUDA target: the "
                        "library gets CPU variants only; pass TARGETS to choose")
      endif()
      list(PREPEND targets ${from_archs})
    endif()
    # ... and, in a HIP project, the gfx targets CMAKE_HIP_ARCHITECTURES names (feature suffixes
    # such as ":xnack-" dropped); entries without a row are skipped with a warning.
    if("HIP" IN_LIST languages)
      set(from_archs "")
      set(skipped "")
      foreach(a IN LISTS CMAKE_HIP_ARCHITECTURES)
        string(REGEX REPLACE ":.*$" "" a "${a}")
        list(FIND names "${a}" i)
        set(backend "")
        if(i GREATER_EQUAL 0)
          list(GET backends ${i} backend)
        endif()
        if(backend STREQUAL "hip" AND NOT a STREQUAL "hip")
          list(APPEND from_archs "${a}")
        elseif(NOT a MATCHES "^(OFF|FALSE|NO|0)?$")
          list(APPEND skipped "${a}")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES from_archs)
      if(skipped)
        string(REPLACE ";" " " skipped "${skipped}")
        message(WARNING "add_tile_kernels(${lib}): CMAKE_HIP_ARCHITECTURES entries without a "
                        "tilegen target are skipped: ${skipped}")
      endif()
      list(PREPEND targets ${from_archs})
    endif()
  endif()
  set(cuda "")
  foreach(t IN LISTS targets)
    list(FIND names "${t}" i)
    if(i GREATER_EQUAL 0)
      list(GET backends ${i} backend)
      if(backend STREQUAL "cuda")
        list(APPEND cuda ${t})
      endif()
    endif() # unknown names: `tilegen outputs` reports them with the list of known targets
  endforeach()
  set(${out_targets} "${targets}" PARENT_SCOPE)
  set(${out_cuda} "${cuda}" PARENT_SCOPE)
endfunction()

# Compiles the .cu variants of each CUDA target of <lib> for that target's architecture (one
# OBJECT library <lib>__<target> each, CUDA_ARCHITECTURES from _tilegen_cuda_arch), adds their
# objects to <lib> and links <lib> to TileGen::runtime_cuda (static cudart; no libcuda at link
# time). Reads _tg_files_<t> and _tg_flags_<t> of the caller. Needs no GPU on the build machine.
function(_tilegen_add_cuda_variants lib cuda_targets out_dir)
  if(NOT TARGET TileGen::runtime_cuda)
    string(REPLACE ";" " " cuda_targets "${cuda_targets}")
    message(FATAL_ERROR "add_tile_kernels(${lib}): CUDA targets (${cuda_targets}) need "
                        "TileGen::runtime_cuda, which this tilegen was built without (no CUDA "
                        "toolkit found when tilegen was configured, or TILEGEN_WITH_CUDA=OFF)")
  endif()
  foreach(t IN LISTS cuda_targets)
    if(NOT _tg_files_${t})
      continue()
    endif()
    _tilegen_cuda_arch(${t} arch)
    set(obj ${lib}__${t})
    add_library(${obj} OBJECT ${_tg_files_${t}})
    # TileGen::runtime for tilegen/variant.h (an OBJECT library takes only the usage
    # requirements: its objects link nothing themselves).
    target_link_libraries(${obj} PRIVATE TileGen::runtime)
    # The generation step is shared with <lib>: one custom target runs it, so that generators
    # other than Ninja never run it twice in parallel.
    add_dependencies(${obj} ${lib}_tilegen_generate)
    set_target_properties(${obj} PROPERTIES
      CUDA_ARCHITECTURES "${arch}" POSITION_INDEPENDENT_CODE ON)
    if(NOT DEFINED CMAKE_CUDA_STANDARD)
      # The generated .cu files are C++17; an inherited CMAKE_CXX_STANDARD 20 becomes a "CUDA20"
      # dialect CMake 3.25 cannot ask nvcc for.
      set_target_properties(${obj} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
    endif()
    # Variants are hot loops: -O3 for the host side whatever the build type (device code is
    # optimized by default), plus the target's own flags from the target table.
    target_compile_options(${obj} PRIVATE -O3 ${_tg_flags_${t}})
    target_sources(${lib} PRIVATE $<TARGET_OBJECTS:${obj}>)
  endforeach()
  # PRIVATE: a static <lib> still passes it on to whatever links <lib> ($<LINK_ONLY:>).
  target_link_libraries(${lib} PRIVATE TileGen::runtime_cuda)
  set_property(TARGET ${lib} PROPERTY TILEGEN_CUDA_TARGETS "${cuda_targets}")
endfunction()

# ---- HIP targets -------------------------------------------------------------------------------
# Each .hip variant of HIP target <t>: its device pass compiled once per AMD arch (a gfx target:
# its own arch; the portable `hip` target: every gfx arch of the library, else
# CMAKE_HIP_ARCHITECTURES, else every gfx row of the table) into a code object by the compiler
# the table names (TILEGEN_HIPCC: hipcc, TILEGEN_HIP_CLANG: clang++-19), the code objects
# embedded by the variant's host pass (<variant>.images.h), which the C++ compiler builds with
# no HIP header; <lib> links TileGen::runtime_hip. Reads _tg_files_<t>, _tg_hiparch_<t> and
# _tg_hipcc_<t> of the caller. Needs no AMD GPU and no HIP language.
function(_tilegen_add_hip_variants lib hip_targets out_dir)
  if(NOT TARGET TileGen::runtime_hip)
    message(FATAL_ERROR "add_tile_kernels(${lib}): HIP targets need TileGen::runtime_hip "
                        "(built on Unix only)")
  endif()
  get_property(cmake_dir GLOBAL PROPERTY TILEGEN_CMAKE_DIR)
  _tilegen_tools(tool_target tool_exe)
  _tilegen_target_backends("${tool_exe}" names backends)
  set(lib_arches "")
  foreach(t IN LISTS hip_targets)
    if(NOT _tg_hiparch_${t} STREQUAL "-")
      list(APPEND lib_arches ${_tg_hiparch_${t}})
      set(_cc_${_tg_hiparch_${t}} ${_tg_hipcc_${t}})
    endif()
  endforeach()
  set(portable_arches "${lib_arches}")
  if(NOT portable_arches)
    foreach(a IN LISTS CMAKE_HIP_ARCHITECTURES)
      string(REGEX REPLACE ":.*$" "" a "${a}")
      list(APPEND portable_arches "${a}")
    endforeach()
  endif()
  if(NOT portable_arches)
    foreach(name backend IN ZIP_LISTS names backends)
      if(backend STREQUAL "hip" AND NOT name STREQUAL "hip")
        list(APPEND portable_arches ${name})
      endif()
    endforeach()
  endif()
  set(work "${CMAKE_CURRENT_BINARY_DIR}/${lib}_tilegen_hip")
  foreach(t IN LISTS hip_targets)
    if(NOT _tg_files_${t})
      continue()
    endif()
    set(arches "${_tg_hiparch_${t}}")
    if(arches STREQUAL "-")
      set(arches "${portable_arches}")
    endif()
    foreach(f IN LISTS _tg_files_${t})
      set(images "")
      set(objects "")
      foreach(a IN LISTS arches)
        # the compiler of the gfx row of that arch; an arch without a row in the library:
        # hipcc where ROCm 5.2 knows it (gfx90a, gfx908, ...), clang-19 otherwise
        set(kind "${_cc_${a}}")
        if(NOT kind)
          if(a MATCHES "^gfx(90[0-9a-c]|8|10[13])")
            set(kind hipcc)
          else()
            set(kind clang-19)
          endif()
        endif()
        if(kind STREQUAL "hipcc")
          find_program(TILEGEN_HIPCC hipcc)
          set(cc "${TILEGEN_HIPCC}")
        else()
          find_program(TILEGEN_HIP_CLANG NAMES clang++-19 clang++)
          set(cc "${TILEGEN_HIP_CLANG}")
        endif()
        if(NOT cc)
          message(FATAL_ERROR "add_tile_kernels(${lib}): HIP target ${t} needs ${kind} for "
                              "${a} (set TILEGEN_HIPCC / TILEGEN_HIP_CLANG)")
        endif()
        add_custom_command(
          OUTPUT "${f}.${a}.co"
          COMMAND sh "${cmake_dir}/tilegen_hip.sh" device "${cc}" ${kind} ${a} "${f}"
                  "${f}.${a}.co" "${work}"
          DEPENDS "${f}" ${lib}_tilegen_generate
          COMMENT "tilegen: HIP device pass of ${f} for ${a}"
          VERBATIM)
        list(APPEND images "${a}=${f}.${a}.co")
        list(APPEND objects "${f}.${a}.co")
      endforeach()
      add_custom_command(
        OUTPUT "${f}.images.h"
        COMMAND sh "${cmake_dir}/tilegen_hip.sh" images "${f}.images.h" ${images}
        DEPENDS ${objects}
        VERBATIM)
      set_source_files_properties(${f} PROPERTIES
        LANGUAGE CXX
        COMPILE_OPTIONS "-x;c++;-std=c++17;-O2"
        COMPILE_DEFINITIONS "TG_HIP_IMAGES=\"${f}.images.h\""
        OBJECT_DEPENDS "${f}.images.h;${objects}")
      target_sources(${lib} PRIVATE ${f})
    endforeach()
  endforeach()
  target_link_libraries(${lib} PRIVATE TileGen::runtime_hip)
  set_property(TARGET ${lib} PROPERTY TILEGEN_HIP_TARGETS "${hip_targets}")
endfunction()

# add_tile_kernels is a macro so that enable_language(CUDA) runs in the caller's (directory)
# scope: inside a function the compiler variables it sets would vanish at the function's end.
# Call it at file scope. Its own variables are named _tg_* and unset at the end.
macro(add_tile_kernels _tg_lib)
  _tilegen_plan_targets(${_tg_lib} _tg_targets _tg_cuda ${ARGN})
  if(_tg_cuda)
    get_property(_tg_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST _tg_languages)
      include(CheckLanguage)
      check_language(CUDA)
      if(NOT CMAKE_CUDA_COMPILER)
        string(REPLACE ";" " " _tg_cuda "${_tg_cuda}")
        message(FATAL_ERROR "add_tile_kernels(${_tg_lib}): TARGETS lists CUDA targets "
                            "(${_tg_cuda}) but no CUDA compiler was found: install the CUDA "
                            "toolkit, put nvcc on PATH or set CMAKE_CUDA_COMPILER (or CUDACXX), "
                            "or drop the sm_* targets")
      endif()
      enable_language(CUDA)
    endif()
    unset(_tg_languages)
  endif()
  # HIP targets: each variant's host pass is C++ (the device passes are custom commands).
  _tilegen_target_backends("" _tg_names _tg_backends)
  foreach(_tg_t IN LISTS _tg_targets)
    list(FIND _tg_names "${_tg_t}" _tg_i)
    if(_tg_i GREATER_EQUAL 0)
      list(GET _tg_backends ${_tg_i} _tg_b)
      get_property(_tg_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
      if(_tg_b STREQUAL "hip" AND NOT "CXX" IN_LIST _tg_languages)
        enable_language(CXX)
      endif()
    endif()
  endforeach()
  unset(_tg_names)
  unset(_tg_backends)
  unset(_tg_i)
  unset(_tg_b)
  unset(_tg_t)
  unset(_tg_languages)
  _tilegen_add_tile_kernels(${_tg_lib} ${ARGN} _TG_RESOLVED_TARGETS ${_tg_targets})
  unset(_tg_targets)
  unset(_tg_cuda)
endmacro()

# Metal targets (docs/metal.md). On Apple platforms with xcrun: every .metal variant compiled
# (`xcrun -sdk macosx metal -c`, the target's flags) and linked into <lib>.metallib
# (`xcrun -sdk macosx metallib`), embedded as a C array (cmake/metal/embed.cmake). Elsewhere:
# the array is empty (Metal rows never run there: tilegen_runtime_metal says so and calls take
# the CPU variants), and, where a clang++ exists, every variant is type-checked against the
# declaration shim cmake/metal/metal_stdlib at build time (target <lib>_metal). Sets
# ${out_metallib_c} to the C file with the metallib's bytes.
function(_tilegen_add_metal lib out_dir metal_files metal_flags outputs out_metallib_c)
  get_property(cmake_dir GLOBAL PROPERTY TILEGEN_CMAKE_DIR)
  set(c_file "${out_dir}/${lib}_metallib.c")
  list(LENGTH metal_files n)
  find_program(TILEGEN_XCRUN xcrun)
  if(APPLE AND TILEGEN_XCRUN)
    set(airs "")
    foreach(f IN LISTS metal_files)
      get_filename_component(name "${f}" NAME_WE)
      set(air "${out_dir}/air/${name}.air")
      add_custom_command(OUTPUT "${air}"
        COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}/air"
        COMMAND "${TILEGEN_XCRUN}" -sdk macosx metal ${metal_flags} -c "${f}" -o "${air}"
        DEPENDS "${f}" ${outputs}
        COMMENT "metal: ${name}.metal" VERBATIM)
      list(APPEND airs "${air}")
    endforeach()
    add_custom_command(OUTPUT "${out_dir}/${lib}.metallib"
      COMMAND "${TILEGEN_XCRUN}" -sdk macosx metallib ${airs} -o "${out_dir}/${lib}.metallib"
      DEPENDS ${airs} COMMENT "metallib: ${lib}.metallib (${n} kernels)" VERBATIM)
    add_custom_command(OUTPUT "${c_file}"
      COMMAND "${CMAKE_COMMAND}" -DIN=${out_dir}/${lib}.metallib -DOUT=${c_file}
              -DSYMBOL=${lib}_metallib -P "${cmake_dir}/metal/embed.cmake"
      DEPENDS "${out_dir}/${lib}.metallib" "${cmake_dir}/metal/embed.cmake"
      COMMENT "metallib: embedding ${lib}.metallib" VERBATIM)
  else()
    file(MAKE_DIRECTORY "${out_dir}")
    execute_process(COMMAND "${CMAKE_COMMAND}" -DOUT=${c_file} -DSYMBOL=${lib}_metallib
                            -P "${cmake_dir}/metal/embed.cmake")
    find_program(TILEGEN_METAL_CLANGXX NAMES clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
    set(checked "")
    if(TILEGEN_METAL_CLANGXX)
      set(stamp "${out_dir}/${lib}_metal_typecheck.stamp")
      add_custom_command(OUTPUT "${stamp}"
        COMMAND "${TILEGEN_METAL_CLANGXX}" -x c++ -std=c++20 -fms-extensions -fsyntax-only
                -nostdinc -nostdinc++ -isystem "${cmake_dir}/metal" -Wno-unknown-attributes
                -Werror ${metal_files}
        COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
        DEPENDS ${outputs} "${cmake_dir}/metal/metal_stdlib"
        COMMENT "tilegen: type-checking ${n} Metal sources of ${lib} against cmake/metal/metal_stdlib"
        VERBATIM)
      add_custom_target(${lib}_metal DEPENDS "${stamp}")
      set(checked ", type-checked with ${TILEGEN_METAL_CLANGXX} against the metal_stdlib shim")
    endif()
    message(STATUS "add_tile_kernels(${lib}): TARGETS metal: ${n} Metal sources generated${checked}; "
                   "the metallib needs macOS (xcrun metal), so ${lib}'s Metal variants cannot run "
                   "in this build and its calls take the CPU variants (docs/metal.md)")
  endif()
  set(${out_metallib_c} "${c_file}" PARENT_SCOPE)
endfunction()

function(_tilegen_add_tile_kernels lib)
  cmake_parse_arguments(PARSE_ARGV 1 arg "STATIC;SHARED;TORCH" "OUTPUT_DIR;TUNING_DB"
                        "SPECS;TARGETS;_TG_RESOLVED_TARGETS")
  set(arg_TARGETS "${arg__TG_RESOLVED_TARGETS}")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_tile_kernels(${lib}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SPECS)
    message(FATAL_ERROR "add_tile_kernels(${lib}): SPECS <spec.yaml>... is required")
  endif()
  if(NOT arg_TARGETS)
    message(FATAL_ERROR "add_tile_kernels(${lib}): no targets (TARGETS sm_80 c ...)")
  endif()
  if(arg_STATIC AND arg_SHARED)
    message(FATAL_ERROR "add_tile_kernels(${lib}): give STATIC or SHARED, not both")
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
  set(torch_flag "")
  if(arg_TORCH)
    set(torch_flag --torch)
  endif()
  # TUNING_DB: read by outputs (which variants classes share) and generate; a dependency of
  # both (the configure step re-runs and the library regenerates when it changes).
  set(db_flag "")
  set(db_abs "")
  if(arg_TUNING_DB)
    get_filename_component(db_abs "${arg_TUNING_DB}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${db_abs}")
      message(FATAL_ERROR "add_tile_kernels(${lib}): TUNING_DB file not found: ${db_abs}")
    endif()
    set(db_flag --tuning-db "${db_abs}")
  endif()

  _tilegen_tools(tool_target tool_exe)

  # Configure time: the file list and the per-target flags. Re-run when a spec changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${specs_abs} ${db_abs})
  execute_process(
    COMMAND "${tool_exe}" outputs --lib ${lib} --targets ${targets_csv} --format=cmake
            ${torch_flag} ${db_flag} ${specs_arg}
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "add_tile_kernels(${lib}): tilegen rejected the arguments or specs "
                        "(exit ${rc}):\n${errors}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(header "")
  set(torch_source "")
  set(sources "")
  set(variants "")
  set(outputs "")
  set(wgsl_files "")
  set(metal_files "")
  set(metal_host "")
  set(metal_flags "")
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
    elseif(kind STREQUAL "torch") # the PyTorch operators: the extension's one source
      list(GET fields 1 f)
      set(torch_source "${out_dir}/${f}")
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
    elseif(kind STREQUAL "wgsl" OR kind STREQUAL "wgsl_host")
      # WGSL (docs/wgsl.md): .wgsl variants, the ES module, its .d.ts and the JSON manifest
      # are generated and installed, never compiled.
      list(GET fields 1 f)
      list(APPEND wgsl_files "${out_dir}/${f}")
      list(APPEND outputs "${out_dir}/${f}")
    elseif(kind STREQUAL "metal")
      # Metal (docs/metal.md): .metal variants become the library's metallib (macOS), their C
      # launchers (metal_host) are library sources.
      list(GET fields 1 f)
      list(APPEND metal_files "${out_dir}/${f}")
      list(APPEND outputs "${out_dir}/${f}")
    elseif(kind STREQUAL "metal_host")
      list(GET fields 1 f)
      set(metal_host "${out_dir}/${f}")
      list(APPEND outputs "${out_dir}/${f}")
    elseif(kind STREQUAL "metal_flags")
      list(LENGTH fields n)
      if(n GREATER 2)
        list(SUBLIST fields 2 -1 metal_flags)
      endif()
    elseif(kind STREQUAL "hip")
      list(GET fields 1 t)
      list(GET fields 2 _tg_hiparch_${t})
      list(GET fields 3 _tg_hipcc_${t})
    elseif(kind STREQUAL "gcc_flags") # flags only GCC gets (workarounds of GCC bugs)
      list(GET fields 1 t)
      list(SUBLIST fields 2 -1 _tg_gccflags_${t})
    elseif(kind STREQUAL "cpu_arch") # C targets of one CPU architecture
      list(GET fields 1 t)
      list(GET fields 2 _tg_cpu_arch_${t})
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
  _tilegen_generator(generator_cmd generator_deps)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${generator_cmd}" generate --lib ${lib} --targets ${targets_csv}
            --out "${out_dir}" ${torch_flag} ${db_flag} ${specs_arg}
    DEPENDS ${specs_abs} ${db_abs} ${generator_deps}
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    COMMENT "tilegen: generating ${lib} (${n_variants} variants for ${targets_csv})"
    VERBATIM)

  # CUDA targets: their .cu variants leave the library's own sources for one OBJECT library
  # per target (below).
  _tilegen_target_backends("${tool_exe}" names backends)
  set(cuda_targets "")
  set(hip_targets "")
  set(skipped_arch "")
  _tilegen_cpu_arch(host_cpu_arch)
  foreach(t IN LISTS arg_TARGETS)
    list(FIND names "${t}" i)
    if(i GREATER_EQUAL 0)
      list(GET backends ${i} backend)
      if(backend STREQUAL "cuda")
        list(APPEND cuda_targets ${t})
        if(_tg_files_${t})
          list(REMOVE_ITEM variants ${_tg_files_${t}})
        endif()
        continue()
      endif()
      if(backend STREQUAL "hip") # compiled by _tilegen_add_hip_variants
        list(APPEND hip_targets ${t})
        if(_tg_files_${t})
          list(REMOVE_ITEM variants ${_tg_files_${t}})
        endif()
        continue()
      endif()
    endif()
    if(_tg_files_${t} AND _tg_cpu_arch_${t} AND NOT _tg_cpu_arch_${t} STREQUAL host_cpu_arch)
      # Another CPU architecture's variants (its compiler's flags): generated, not compiled;
      # the dispatch code leaves their rows out on this architecture.
      list(REMOVE_ITEM variants ${_tg_files_${t}})
      list(APPEND skipped_arch ${t})
      continue()
    endif()
    if(_tg_files_${t})
      # Variants are hot loops: -O3 whatever the build type, plus the target's ISA flags.
      set(_tg_opts -O3 ${_tg_flags_${t}})
      foreach(f IN LISTS _tg_gccflags_${t})
        list(APPEND _tg_opts "$<$<C_COMPILER_ID:GNU>:${f}>")
      endforeach()
      set_source_files_properties(${_tg_files_${t}} PROPERTIES COMPILE_OPTIONS "${_tg_opts}")
    endif()
  endforeach()
  if(skipped_arch)
    string(REPLACE ";" " " skipped_arch "${skipped_arch}")
    message(STATUS "add_tile_kernels(${lib}): ${skipped_arch}: variants for another CPU "
                   "architecture than ${CMAKE_SYSTEM_PROCESSOR}, generated but not compiled")
  endif()

  if(arg_TORCH AND NOT header)
    message(FATAL_ERROR "add_tile_kernels(${lib}): TORCH needs C or CUDA targets (the "
                        "operators call the C library)")
  endif()
  # WGSL only (no C header): <lib> is a custom target that generates the files.
  if(wgsl_files AND NOT header)
    add_custom_target(${lib} ALL DEPENDS ${outputs})
    set_target_properties(${lib} PROPERTIES
      TILEGEN_OUTPUT_DIR "${out_dir}" TILEGEN_WGSL_FILES "${wgsl_files}")
    return()
  endif()

  if(NOT TARGET OpenMP::OpenMP_C)
    find_package(OpenMP REQUIRED COMPONENTS C)
  endif()
  if(metal_files)
    _tilegen_add_metal(${lib} "${out_dir}" "${metal_files}" "${metal_flags}" "${outputs}" metallib_c)
    list(APPEND sources ${metal_host} ${metallib_c})
  endif()
  add_library(${lib} ${type} ${header} ${sources} ${variants})
  if(metal_files)
    target_link_libraries(${lib} PUBLIC TileGen::runtime_metal)
    if(TARGET ${lib}_metal)
      add_dependencies(${lib} ${lib}_metal)
    endif()
  endif()
  if(wgsl_files) # WGSL beside C/CUDA targets: generated by the same step as the sources
    set_target_properties(${lib} PROPERTIES TILEGEN_WGSL_FILES "${wgsl_files}")
  endif()
  if(cuda_targets OR hip_targets)
    add_custom_target(${lib}_tilegen_generate DEPENDS ${outputs})
    add_dependencies(${lib} ${lib}_tilegen_generate)
  endif()
  if(cuda_targets)
    _tilegen_add_cuda_variants(${lib} "${cuda_targets}" "${out_dir}")
  endif()
  if(hip_targets)
    _tilegen_add_hip_variants(${lib} "${hip_targets}" "${out_dir}")
  endif()
  target_include_directories(${lib} PUBLIC
    "$<BUILD_INTERFACE:${out_dir}>" "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  target_link_libraries(${lib} PUBLIC TileGen::runtime PRIVATE OpenMP::OpenMP_C)
  if(UNIX)
    target_link_libraries(${lib} PRIVATE m)
  endif()
  set_target_properties(${lib} PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON
    TILEGEN_HEADER "${header}" TILEGEN_OUTPUT_DIR "${out_dir}")
  if(arg_TORCH)
    _tilegen_add_torch(${lib} "${torch_source}" "${cuda_targets}")
  endif()
endfunction()

# ---- PyTorch operators (docs/torch.md) -----------------------------------------------------
# <lib>_torch: a MODULE library built from the generated <lib>_torch.cpp (TORCH_LIBRARY
# registrations of torch.ops.<lib>.*), linked to <lib>, in the folder
# ${CMAKE_CURRENT_BINARY_DIR}/<lib>_torch together with an __init__.py that loads it, so that
# `import <lib>_torch` (that folder's parent on sys.path) or torch.ops.load_library(<file>)
# registers the operators. Needs find_package(Torch) only: no Python, no tilegen at run time.
# CUDA kernels are registered when <lib> has CUDA targets and PyTorch was built with CUDA.
function(_tilegen_add_torch lib source cuda_targets)
  # What find_package(Torch) found, kept in global properties: its variables are local to the
  # scope that found it (this function, for the first TORCH library of a project that did not
  # find Torch itself), its imported targets are not.
  get_property(torch_libs GLOBAL PROPERTY _TILEGEN_TORCH_LIBRARIES)
  if(NOT torch_libs)
    if(NOT TORCH_LIBRARIES)
      find_package(Torch QUIET)
      if(NOT Torch_FOUND)
        message(FATAL_ERROR "add_tile_kernels(${lib}): TORCH needs PyTorch's CMake package "
                            "(find_package(Torch)): set Torch_DIR or CMAKE_PREFIX_PATH to the folder "
                            "of TorchConfig.cmake (python3 -c 'import torch.utils; "
                            "print(torch.utils.cmake_prefix_path)' prints it for a pip install)")
      endif()
    endif()
    set(torch_libs ${TORCH_LIBRARIES})
    set(torch_cuda OFF)
    if(C10_CUDA_LIBRARY OR TARGET c10_cuda)
      set(torch_cuda ON)
    endif()
    set_property(GLOBAL PROPERTY _TILEGEN_TORCH_LIBRARIES "${torch_libs}")
    set_property(GLOBAL PROPERTY _TILEGEN_TORCH_VERSION "${Torch_VERSION}")
    set_property(GLOBAL PROPERTY _TILEGEN_TORCH_CUDA ${torch_cuda})
  endif()
  get_property(Torch_VERSION GLOBAL PROPERTY _TILEGEN_TORCH_VERSION)
  get_property(torch_cuda GLOBAL PROPERTY _TILEGEN_TORCH_CUDA)
  set(ext ${lib}_torch)
  set(pkg "${CMAKE_CURRENT_BINARY_DIR}/${ext}")
  add_library(${ext} MODULE "${source}")
  add_dependencies(${ext} ${lib})
  target_link_libraries(${ext} PRIVATE ${lib} ${torch_libs})
  if(NOT DEFINED CMAKE_CXX_STANDARD)
    set_target_properties(${ext} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  endif()
  set_target_properties(${ext} PROPERTIES PREFIX "" OUTPUT_NAME "_${lib}_ops"
    LIBRARY_OUTPUT_DIRECTORY "${pkg}" POSITION_INDEPENDENT_CODE ON
    TILEGEN_TORCH_PACKAGE_DIR "${pkg}")
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    # The runtime's and the dispatch library's symbols stay inside the extension.
    target_link_options(${ext} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
  set(cuda_note "")
  if(cuda_targets AND torch_cuda)
    target_compile_definitions(${ext} PRIVATE TILEGEN_TORCH_CUDA)
    # c10/cuda/CUDAStream.h includes the CUDA runtime's headers (headers only: the extension's
    # CUDA calls go through <lib>, and torch brings its own cudart).
    if(TARGET CUDA::toolkit)
      target_link_libraries(${ext} PRIVATE CUDA::toolkit)
    elseif(CUDAToolkit_INCLUDE_DIRS)
      target_include_directories(${ext} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    endif()
    set(cuda_note ", CPU and CUDA kernels")
  elseif(cuda_targets)
    message(WARNING "add_tile_kernels(${lib}): this PyTorch (${Torch_VERSION}) has no CUDA: "
                    "${ext} registers CPU kernels only")
  endif()
  set_property(TARGET ${lib} PROPERTY TILEGEN_TORCH_TARGET ${ext})
  set(ext_file "$<TARGET_FILE_NAME:${ext}>")
  string(CONFIGURE [=[
# @generated by add_tile_kernels(@lib@ ... TORCH) (tilegen, docs/torch.md). Importing this
# package registers the PyTorch operators of tilegen library '@lib@': torch.ops.@lib@.*
import os as _os

import torch as _torch

LIBRARY = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "@ext_file@")
BUILT_WITH_TORCH = "@Torch_VERSION@"

try:
    _torch.ops.load_library(LIBRARY)
except OSError as _e:
    raise ImportError(f"@ext@: cannot load {LIBRARY} (built against PyTorch {BUILT_WITH_TORCH}, "
                      f"this is {_torch.__version__}): {_e}") from _e

ops = _torch.ops.@lib@
]=] init @ONLY)
  string(REGEX REPLACE "^\n" "" init "${init}")
  file(GENERATE OUTPUT "${pkg}/__init__.py" CONTENT "${init}")
  message(STATUS "add_tile_kernels(${lib}): PyTorch ${Torch_VERSION} extension ${ext} "
                 "(import ${ext} from ${CMAKE_CURRENT_BINARY_DIR}${cuda_note})")
endfunction()

# tilegen_install_kernels(<lib> [EXPORT <export-set>] [INCLUDE_DESTINATION <dir>]):
# installs a library made by add_tile_kernels() and its header (default: include/), adding it
# to <export-set> if given. Consumers of the export need find_dependency(TileGen) and
# find_dependency(OpenMP) in the package config; docs/cmake.md shows a complete example.
function(tilegen_install_kernels lib)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPORT;INCLUDE_DESTINATION;WGSL_DESTINATION" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tilegen_install_kernels(${lib}): unknown arguments: "
                        "${arg_UNPARSED_ARGUMENTS}")
  endif()
  include(GNUInstallDirs)
  # WGSL outputs (docs/wgsl.md): the ES module, .d.ts, manifest and .wgsl files, to
  # WGSL_DESTINATION (default <datadir>/tilegen/<lib>).
  get_target_property(wgsl_files ${lib} TILEGEN_WGSL_FILES)
  if(wgsl_files)
    set(wgsl_dest "${arg_WGSL_DESTINATION}")
    if(NOT wgsl_dest)
      set(wgsl_dest "${CMAKE_INSTALL_DATADIR}/tilegen/${lib}")
    endif()
    install(FILES ${wgsl_files} DESTINATION ${wgsl_dest})
  endif()
  get_target_property(header ${lib} TILEGEN_HEADER)
  if(NOT header AND wgsl_files)
    return() # a WGSL-only library: nothing to link
  endif()
  if(NOT header)
    message(FATAL_ERROR "tilegen_install_kernels: ${lib} was not made by add_tile_kernels()")
  endif()
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
