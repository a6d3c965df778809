/* thread.c - thread names and scheduling classes (see thread.h). */
#include "base/thread.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int ty_thread_setup(pthread_t t, const char *name, ty_thread_class cls)
{
    struct sched_param p = {.sched_priority = 0};
    int policy = cls == TY_THREAD_IDLE         ? SCHED_IDLE
                 : cls == TY_THREAD_BACKGROUND ? SCHED_BATCH
                                               : SCHED_OTHER;
    char buf[16];

    if (name) {
        snprintf(buf, sizeof(buf), "%s", name);
        pthread_setname_np(t, buf);
    }
    return pthread_setschedparam(t, policy, &p) == 0 ? 0 : -1;
}

int ty_thread_upstream_self(void)
{
    /* per thread on Linux: the nice value of the thread, not the process */
    id_t tid = (id_t)syscall(SYS_gettid);
    int now;

    errno = 0;
    now = getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno)
        return -1;
    if (now >= TY_THREAD_UPSTREAM_NICE)
        return 0; /* niced as much already (raising it back needs privilege) */
    return setpriority(PRIO_PROCESS, tid, TY_THREAD_UPSTREAM_NICE);
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

/* ---- ty_rwlock ---- */

#define TY_RW_WRITER 0x80000000u
/* Turns a reader or the writer spins (with a pause) before it sleeps: the
 * sections it waits for are short, and a sleep costs two context switches. */
#define TY_RW_SPINS 128

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word, int n)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

void ty_rwlock_init(ty_rwlock *l)
{
    atomic_init(&l->state, 0);
    atomic_init(&l->seq, 0);
    atomic_init(&l->rwaiters, 0);
    pthread_mutex_init(&l->wmu, NULL);
}

void ty_rwlock_destroy(ty_rwlock *l)
{
    pthread_mutex_destroy(&l->wmu);
}

void ty_rwlock_rdlock(ty_rwlock *l)
{
    for (;;) {
        uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed), seq;

        for (int i = 0; i < TY_RW_SPINS && (s & TY_RW_WRITER); i++) {
            cpu_relax();
            s = atomic_load_explicit(&l->state, memory_order_relaxed);
        }
        if (!(s & TY_RW_WRITER)) {
            if (atomic_compare_exchange_weak_explicit(&l->state, &s, s + 1,
                                                      memory_order_acquire,
                                                      memory_order_relaxed))
                return;
            continue;
        }
        /* Counted before looking again (both seq_cst): the writer that
         * clears the bit after that look bumps seq and sees us counted, so
         * the kernel's compare fails or the wake finds us. */
        seq = atomic_load(&l->seq);
        atomic_fetch_add(&l->rwaiters, 1);
        if (atomic_load(&l->state) & TY_RW_WRITER)
            futex_wait(&l->seq, seq);
        atomic_fetch_sub(&l->rwaiters, 1);
    }
}

void ty_rwlock_rdunlock(ty_rwlock *l)
{
    /* The last reader out of a lock a writer waits for wakes it. */
    if (atomic_fetch_sub_explicit(&l->state, 1, memory_order_release) - 1 == TY_RW_WRITER)
        futex_wake(&l->state, 1);
}

void ty_rwlock_wrlock(ty_rwlock *l)
{
    uint32_t s;

    pthread_mutex_lock(&l->wmu);
    s = atomic_fetch_or(&l->state, TY_RW_WRITER) | TY_RW_WRITER;
    for (int i = 0; s != TY_RW_WRITER; i++) {
        if (i < TY_RW_SPINS)
            cpu_relax();
        else
            futex_wait(&l->state, s);
        s = atomic_load_explicit(&l->state, memory_order_acquire);
    }
}

void ty_rwlock_wrunlock(ty_rwlock *l)
{
    atomic_fetch_and(&l->state, ~TY_RW_WRITER);
    atomic_fetch_add(&l->seq, 1);
    if (atomic_load(&l->rwaiters))
        futex_wake(&l->seq, INT_MAX);
    pthread_mutex_unlock(&l->wmu);
}
