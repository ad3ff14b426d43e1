/* Default run-time options of the sanitizers, compiled into every executable of a
 * TILEGEN_SANITIZE build (CMakeLists.txt). A report must fail whatever ran the program: abort
 * (SIGABRT) instead of exiting 1, which tilegen uses for user errors and `not` accepts. The
 * environment (ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS) still overrides each option. */
const char* __asan_default_options(void);
const char* __ubsan_default_options(void);
const char* __lsan_default_options(void);

/* The generator allocates many small IR nodes: allocation and free stacks of 10 frames (default
 * 30) and a 64 MB quarantine (default 256) halve the run time of a check under ASan and keep
 * use-after-free reports with both stacks. detect_stack_use_after_return costs another third;
 * the fuzzers' long runs may turn it on (ASAN_OPTIONS=detect_stack_use_after_return=1). */
const char* __asan_default_options(void) {
  return "abort_on_error=1:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0:"
         "malloc_context_size=10:quarantine_size_mb=64:strict_string_checks=1:"
         "check_initialization_order=1:print_summary=1";
}

const char* __ubsan_default_options(void) {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1";
}

const char* __lsan_default_options(void) {
  return "abort_on_error=1";
}
