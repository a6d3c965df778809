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
 * preempted the leader, which then waited off the CPU while every other
 * writer waited for it: 30 % of the time the commit section was held
 * (bench/run-sched-e2e-bench.sh, docs/benchmarks.md). The local node agent,
 * which starts and watches the replicas' processes, keeps the default policy,
 * and so do the processes it starts. */
#ifndef TY_BASE_THREAD_H
#define TY_BASE_THREAD_H

#include <pthread.h>

typedef enum {
    TY_THREAD_INTERACTIVE, /* SCHED_OTHER, the default: a wake-up may preempt */
    TY_THREAD_BACKGROUND,  /* SCHED_BATCH */
} ty_thread_class;

/* Names t (name NULL: left as it is; at most 15 bytes are kept) and sets
 * its policy (nice value unchanged). 0, or -1 when the kernel refused the
 * policy; a failure changes nothing about what the thread does. */
int ty_thread_setup(pthread_t t, const char *name, ty_thread_class cls);

#endif
