/* Private to the runtime: comma-separated name lists in environment variables
 * (TILEGEN_CPU_DISABLE, TILEGEN_GPU_DISABLE). */
#ifndef TILEGEN_RUNTIME_ENV_LIST_H
#define TILEGEN_RUNTIME_ENV_LIST_H

/* 1 if `name` is one of the comma-separated entries of environment variable `var`. */
int tg_env_list_has(const char* var, const char* name);

#endif
