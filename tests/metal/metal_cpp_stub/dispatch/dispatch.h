/* A declaration stub of the libdispatch calls runtime/src/metal.cpp uses (Apple's
 * <dispatch/dispatch.h>). Declarations only. */
#pragma once
#include <stddef.h>
typedef struct dispatch_data_s* dispatch_data_t;
typedef struct dispatch_queue_s* dispatch_queue_t;
typedef void (*tg_stub_destructor_t)(void);
#define DISPATCH_DATA_DESTRUCTOR_DEFAULT ((tg_stub_destructor_t)0)
dispatch_data_t dispatch_data_create(const void* buffer, size_t size, dispatch_queue_t queue,
                                     tg_stub_destructor_t destructor);
void dispatch_release(void* object);
