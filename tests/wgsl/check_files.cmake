# cmake -DFILES=<list> -DEXPECT=<n> -P check_files.cmake: every listed file exists, and the
# list has EXPECT entries (the WGSL outputs add_tile_kernels() recorded for its libraries).
list(LENGTH FILES n)
if(NOT n EQUAL EXPECT)
  message(FATAL_ERROR "expected ${EXPECT} WGSL outputs, add_tile_kernels recorded ${n}: ${FILES}")
endif()
foreach(f IN LISTS FILES)
  if(NOT EXISTS "${f}")
    message(FATAL_ERROR "missing WGSL output: ${f}")
  endif()
  message(STATUS "ok ${f}")
endforeach()
