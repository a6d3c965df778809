/* thread.c - thread names and scheduling classes (see thread.h). */
#include "base/thread.h"

#include <sched.h>
#include <stdio.h>

int ty_thread_setup(pthread_t t, const char *name, ty_thread_class cls)
{
    struct sched_param p = {.sched_priority = 0};
    char buf[16];

    if (name) {
        snprintf(buf, sizeof(buf), "%s", name);
        pthread_setname_np(t, buf);
    }
    return pthread_setschedparam(t, cls == TY_THREAD_BACKGROUND ? SCHED_BATCH : SCHED_OTHER,
                                 &p) == 0
               ? 0
               : -1;
}
