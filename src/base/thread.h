/* thread.h - what the server's own threads are called and how the kernel
 * schedules them.
 *
 * Every thread the server starts is named ("ty-sched", "wq-jobs", ...) so
 * that top -H, perf and /proc/PID/task/N/comm tell them apart.
 *
 * The server's threads run under SCHED_BATCH (`trainyard server` sets it on
 * its main thread before it starts anything; threads inherit it): the same
 * share of the CPU as under the default policy, but a thread that wakes up
 * does not preempt the one running. The store commits every write of the
 * process one batch at a time in whichever writer leads (store/commit.c),
 * and each commit wakes every watcher; on two cores the woken watchers
 * would preempt the leader, which then waits off the CPU while every other
 * writer waits for it (docs/benchmarks.md). The local node agent,
 * which starts and watches the replicas' processes, keeps the default policy,
 * and so do the processes it starts. */
#ifndef TY_BASE_THREAD_H
#define TY_BASE_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

typedef enum {
    TY_THREAD_INTERACTIVE, /* SCHED_OTHER, the default: a wake-up may preempt */
    TY_THREAD_BACKGROUND,  /* SCHED_BATCH */
    TY_THREAD_IDLE,        /* SCHED_IDLE: runs only when a CPU has nothing else to run
                              (and a sliver of the time otherwise); for work that can wait,
                              with a bound on how much may (store/reaper.c).
                              An unprivileged thread cannot leave it again. */
} ty_thread_class;

/* Names t (name NULL: left as it is; at most 15 bytes are kept) and sets
 * its policy (nice value unchanged). 0, or -1 when the kernel refused the
 * policy; a failure changes nothing about what the thread does. */
int ty_thread_setup(pthread_t t, const char *name, ty_thread_class cls);

/* The nice value of a thread that makes work for others (the job engines'
 * workers create the pods the scheduler binds and the nodes run). */
#define TY_THREAD_UPSTREAM_NICE 3

/* Gives the calling thread a smaller share of the CPU when the CPU is
 * contended (nice TY_THREAD_UPSTREAM_NICE, or its own if that is higher
 * already; no effect while the CPU is not contended): the
 * stages that drain the work it makes run first, so that work does not pile
 * up between them: with the job engines' workers at the scheduler's share,
 * pods pile up pending on a busy machine and cost throughput. 0, or -1 when
 * the kernel refused (nothing changed). */
int ty_thread_upstream_self(void);

/* A bell: waiters sleep until it rings; ringing never blocks the ringer.
 * glibc's pthread_cond_broadcast can: when it starts a new group of
 * waiters it first waits for the woken waiters of the last group to have
 * run, which under SCHED_BATCH on two busy cores is whenever they get the
 * CPU; the store's leader, which wakes every watcher once per batch, spent
 * ~0.2 s per 16,000 pods asleep there. Waiters use it with their own
 * mutex: take a ticket while holding it and finding nothing to do, unlock,
 * wait on the ticket, lock and look again; a ring after the ticket was
 * taken is never missed. Zero-initialised is ready. Linux futexes. */
typedef struct ty_bell {
    _Atomic uint32_t seq;     /* rings so far (wraps) */
    atomic_uint waiters;      /* threads in ty_bell_wait */
} ty_bell;

uint32_t ty_bell_ticket(ty_bell *b);
/* Sleeps until the bell rang after ticket was taken, or until deadline
 * (CLOCK_MONOTONIC, absolute; NULL: no limit). 0, or ETIMEDOUT. It may
 * return 0 without a ring (a signal): callers look again anyway. */
int ty_bell_wait(ty_bell *b, uint32_t ticket, const struct timespec *deadline);
/* Wakes every waiter; a system call only when somebody waits. */
void ty_bell_ring(ty_bell *b);

/* A reader-writer lock for short read sections and a writer that comes
 * back often, that prefers the writer: once one waits, new readers wait
 * for it. A reader that sleeps holds nothing: it registers only when it
 * gets in. glibc's pthread_rwlock registers a reader before it sleeps, and
 * so counts the readers its writer's unlock woke as holders until each has
 * run; the store's leader, which takes its index for writing once per batch,
 * then waited for them to be scheduled, 0.3-0.5 s per 16,000 pods on two
 * busy cores. Writers are serialised among themselves by a mutex.
 * Zero-initialised is ready, but for the mutex: ty_rwlock_init. Linux
 * futexes. */
typedef struct ty_rwlock {
    _Atomic uint32_t state;   /* TY_RW_WRITER | readers inside */
    _Atomic uint32_t seq;     /* write unlocks so far (wraps): sleeping readers wait on it */
    atomic_uint rwaiters;     /* readers asleep */
    pthread_mutex_t wmu;      /* one writer at a time */
} ty_rwlock;

void ty_rwlock_init(ty_rwlock *l);
void ty_rwlock_destroy(ty_rwlock *l);
void ty_rwlock_rdlock(ty_rwlock *l);
void ty_rwlock_rdunlock(ty_rwlock *l);
void ty_rwlock_wrlock(ty_rwlock *l);
void ty_rwlock_wrunlock(ty_rwlock *l);

#endif
