/* thread.c - thread names and scheduling classes (see thread.h). */
#include "base/thread.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

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

uint32_t ty_bell_ticket(ty_bell *b)
{
    return atomic_load(&b->seq);
}

int ty_bell_wait(ty_bell *b, uint32_t ticket, const struct timespec *deadline)
{
    long rc;
    int e;

    /* Counted before the kernel compares seq with ticket: a ringer that
     * bumped seq either sees us counted (and wakes) or bumped it before the
     * comparison (which then fails at once). Both sides seq_cst. */
    atomic_fetch_add(&b->waiters, 1);
    rc = syscall(SYS_futex, &b->seq, FUTEX_WAIT_BITSET_PRIVATE, ticket, deadline, NULL,
                 FUTEX_BITSET_MATCH_ANY);
    e = errno;
    atomic_fetch_sub(&b->waiters, 1);
    return rc < 0 && e == ETIMEDOUT ? ETIMEDOUT : 0;
}

void ty_bell_ring(ty_bell *b)
{
    atomic_fetch_add(&b->seq, 1);
    if (atomic_load(&b->waiters))
        syscall(SYS_futex, &b->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
