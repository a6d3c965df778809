/* test_thread.c - thread names and scheduling classes (base/thread.c) on
 * real threads, read back from the kernel, and the bell. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/thread.h"

typedef struct sleeper {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
} sleeper;

static void *sleep_main(void *arg)
{
    sleeper *z = arg;

    pthread_mutex_lock(&z->mu);
    while (!z->stop)
        pthread_cond_wait(&z->cv, &z->mu);
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

static int policy_of(pthread_t t)
{
    struct sched_param p;
    int policy = -1;

    assert_int_equal(pthread_getschedparam(t, &policy, &p), 0);
    return policy;
}

static void name_of(pthread_t t, char *buf, size_t len)
{
    assert_int_equal(pthread_getname_np(t, buf, len), 0);
}

static void test_classes_and_names(void **state)
{
    sleeper z = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t t;
    char name[32];

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, sleep_main, &z), 0);
    assert_int_equal(policy_of(t), SCHED_OTHER);

    assert_int_equal(ty_thread_setup(t, "ty-test", TY_THREAD_BACKGROUND), 0);
    assert_int_equal(policy_of(t), SCHED_BATCH);
    name_of(t, name, sizeof(name));
    assert_string_equal(name, "ty-test");

    /* back to the default; no name leaves the name alone */
    assert_int_equal(ty_thread_setup(t, NULL, TY_THREAD_INTERACTIVE), 0);
    assert_int_equal(policy_of(t), SCHED_OTHER);
    name_of(t, name, sizeof(name));
    assert_string_equal(name, "ty-test");

    /* the kernel keeps 15 bytes: the name is cut, not refused */
    assert_int_equal(ty_thread_setup(t, "wq-a-very-long-queue-name", TY_THREAD_BACKGROUND), 0);
    name_of(t, name, sizeof(name));
    assert_string_equal(name, "wq-a-very-long-");

    /* last: an unprivileged thread cannot leave SCHED_IDLE */
    assert_int_equal(ty_thread_setup(t, NULL, TY_THREAD_IDLE), 0);
    assert_int_equal(policy_of(t), SCHED_IDLE);

    pthread_mutex_lock(&z.mu);
    z.stop = 1;
    pthread_cond_signal(&z.cv);
    pthread_mutex_unlock(&z.mu);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* Threads started by a background thread are background too (the server
 * sets its main thread once and everything it starts inherits it). */
static void test_inherited(void **state)
{
    sleeper z = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t t;

    (void)state;
    assert_int_equal(ty_thread_setup(pthread_self(), NULL, TY_THREAD_BACKGROUND), 0);
    assert_int_equal(pthread_create(&t, NULL, sleep_main, &z), 0);
    assert_int_equal(policy_of(t), SCHED_BATCH);
    pthread_mutex_lock(&z.mu);
    z.stop = 1;
    pthread_cond_signal(&z.cv);
    pthread_mutex_unlock(&z.mu);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(ty_thread_setup(pthread_self(), NULL, TY_THREAD_INTERACTIVE), 0);
    assert_int_equal(policy_of(pthread_self()), SCHED_OTHER);
}

static void *upstream_main(void *arg)
{
    int *nice_seen = arg;

    assert_int_equal(ty_thread_upstream_self(), 0);
    errno = 0;
    *nice_seen = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    return errno ? arg : NULL;
}

/* An upstream thread's nice value is its own: the process's, and the
 * thread that made it, keep theirs. */
static void test_upstream_nice_is_the_thread_s(void **state)
{
    int before = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)), seen = -100;
    pthread_t t;
    void *rc;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, upstream_main, &seen), 0);
    assert_int_equal(pthread_join(t, &rc), 0);
    assert_null(rc);
    assert_int_equal(seen, before > TY_THREAD_UPSTREAM_NICE ? before : TY_THREAD_UPSTREAM_NICE);
    assert_int_equal(getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)), before);
    assert_int_equal(getpriority(PRIO_PROCESS, 0), before);
}

static struct timespec after_ms(long ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* A ring after the ticket was taken is not missed, even before the wait;
 * a wait with no ring ends at its deadline. */
static void test_bell_ticket_and_deadline(void **state)
{
    ty_bell b = {0};
    struct timespec d;
    uint32_t t;

    (void)state;
    t = ty_bell_ticket(&b);
    ty_bell_ring(&b); /* nobody waits: no wake-up to send */
    assert_int_equal(atomic_load(&b.waiters), 0);
    d = after_ms(30000);
    assert_int_equal(ty_bell_wait(&b, t, &d), 0); /* at once, not in 30 s */
    t = ty_bell_ticket(&b);
    d = after_ms(50);
    assert_int_equal(ty_bell_wait(&b, t, &d), ETIMEDOUT);
    assert_int_equal(atomic_load(&b.waiters), 0);
}

typedef struct bell_waiter {
    pthread_mutex_t *mu;
    ty_bell *bell;
    const int *flag;
    int seen, timed_out;
} bell_waiter;

static void *bell_main(void *arg)
{
    bell_waiter *w = arg;
    struct timespec d = after_ms(30000);

    pthread_mutex_lock(w->mu);
    while (!*w->flag) {
        uint32_t t = ty_bell_ticket(w->bell);

        pthread_mutex_unlock(w->mu);
        if (ty_bell_wait(w->bell, t, &d) == ETIMEDOUT)
            w->timed_out = 1;
        pthread_mutex_lock(w->mu);
        if (w->timed_out)
            break;
    }
    w->seen = *w->flag;
    pthread_mutex_unlock(w->mu);
    return NULL;
}

/* One ring wakes every waiter, whether it was asleep or about to be. */
static void test_bell_wakes_all(void **state)
{
    enum { N = 4 };
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    ty_bell b = {0};
    int flag = 0;
    bell_waiter w[N];
    pthread_t t[N];

    (void)state;
    for (int i = 0; i < N; i++) {
        w[i] = (bell_waiter){&mu, &b, &flag, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, bell_main, &w[i]), 0);
    }
    /* let some of them get to sleep (not needed for correctness) */
    for (int spins = 0; spins < 1000 && atomic_load(&b.waiters) < N; spins++)
        sched_yield();
    pthread_mutex_lock(&mu);
    flag = 1;
    pthread_mutex_unlock(&mu);
    ty_bell_ring(&b);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].timed_out, 0);
        assert_int_equal(w[i].seen, 1);
    }
    assert_int_equal(atomic_load(&b.waiters), 0);
}

/* ---- ty_rwlock ---- */

#define RW_READERS 4
#define RW_WRITES 20000

typedef struct rw_shared {
    ty_rwlock lock;
    long a, b;          /* equal outside the writer's section */
    atomic_int stop;
    atomic_long reads, torn;
} rw_shared;

static void *rw_reader(void *arg)
{
    rw_shared *sh = arg;

    while (!atomic_load(&sh->stop)) {
        ty_rwlock_rdlock(&sh->lock);
        if (sh->a != sh->b)
            atomic_fetch_add(&sh->torn, 1);
        ty_rwlock_rdunlock(&sh->lock);
        atomic_fetch_add(&sh->reads, 1);
    }
    return NULL;
}

/* Readers never see the writer's section half done, and everybody gets in. */
static void test_rwlock_excludes(void **state)
{
    rw_shared sh = {0};
    pthread_t t[RW_READERS];

    (void)state;
    ty_rwlock_init(&sh.lock);
    for (int i = 0; i < RW_READERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, rw_reader, &sh), 0);
    for (int i = 0; i < RW_WRITES; i++) {
        ty_rwlock_wrlock(&sh.lock);
        sh.a++;
        for (volatile int spin = 0; spin < 50; spin++)
            ;
        sh.b++;
        ty_rwlock_wrunlock(&sh.lock);
    }
    /* the readers go on until each has had some turns after the writes */
    while (atomic_load(&sh.reads) < RW_READERS * 100)
        sched_yield();
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < RW_READERS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&sh.torn), 0);
    assert_int_equal(sh.a, RW_WRITES);
    assert_int_equal(sh.b, RW_WRITES);
    /* free again for both kinds */
    ty_rwlock_rdlock(&sh.lock);
    ty_rwlock_rdlock(&sh.lock);
    ty_rwlock_rdunlock(&sh.lock);
    ty_rwlock_rdunlock(&sh.lock);
    ty_rwlock_wrlock(&sh.lock);
    ty_rwlock_wrunlock(&sh.lock);
    ty_rwlock_destroy(&sh.lock);
}

typedef struct rw_late {
    ty_rwlock *lock;
    atomic_int entered; /* the reader got in */
    atomic_int left;
} rw_late;

static void *rw_late_reader(void *arg)
{
    rw_late *r = arg;

    ty_rwlock_rdlock(r->lock);
    atomic_store(&r->entered, 1);
    ty_rwlock_rdunlock(r->lock);
    atomic_store(&r->left, 1);
    return NULL;
}

static void *rw_holder(void *arg)
{
    ty_rwlock *l = arg;

    ty_rwlock_rdlock(l);
    return NULL; /* keeps it: the main thread lets go for it */
}

/* A waiting writer keeps new readers out; the reader that holds the lock
 * lets the writer in when it leaves. */
static void test_rwlock_prefers_writer(void **state)
{
    ty_rwlock l;
    rw_late r = {.lock = &l};
    pthread_t holder, late;

    (void)state;
    ty_rwlock_init(&l);
    assert_int_equal(pthread_create(&holder, NULL, rw_holder, &l), 0);
    pthread_join(holder, NULL);
    /* a writer announces itself: the state says so while it waits */
    assert_int_equal(atomic_load(&l.state), 1);
    atomic_fetch_or(&l.state, 0x80000000u);
    assert_int_equal(pthread_create(&late, NULL, rw_late_reader, &r), 0);
    while (atomic_load(&l.rwaiters) == 0)
        usleep(1000);
    assert_int_equal(atomic_load(&r.entered), 0);
    /* the holder leaves, the writer goes in and out: the reader follows */
    atomic_fetch_and(&l.state, ~0x80000000u);
    ty_rwlock_rdunlock(&l);
    ty_rwlock_wrlock(&l);
    ty_rwlock_wrunlock(&l);
    pthread_join(late, NULL);
    assert_int_equal(atomic_load(&r.entered), 1);
    ty_rwlock_destroy(&l);
}

/* A reader that slept through a writer's section holds nothing until it
 * runs: the writer, unlocking and locking again before the woken reader got
 * the CPU, does not wait for it. The reader runs at SCHED_IDLE on the
 * writer's CPU, so that it seldom runs while the writer can; a try where it
 * got in all the same says nothing, and one of 20 must find it still out.
 * glibc's pthread_rwlock (writer-preferring) counts the woken reader in at
 * once: its writer's second lock always waits until the reader has been in
 * and out. */
static void test_rwlock_sleeper_holds_nothing(void **state)
{
    struct sched_param idle = {.sched_priority = 0};
    cpu_set_t one, saved;
    int cpu = sched_getcpu(), conclusive = 0;

    (void)state;
    assert_true(cpu >= 0);
    assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    for (int attempt = 0; attempt < 20 && !conclusive; attempt++) {
        ty_rwlock l;
        rw_late r = {.lock = &l};
        pthread_attr_t attr;
        pthread_t late;
        int entered;

        ty_rwlock_init(&l);
        ty_rwlock_wrlock(&l);
        pthread_attr_init(&attr);
        pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        pthread_attr_setschedpolicy(&attr, SCHED_IDLE);
        pthread_attr_setschedparam(&attr, &idle);
        assert_int_equal(pthread_create(&late, &attr, rw_late_reader, &r), 0);
        pthread_attr_destroy(&attr);
        /* (the thread inherited the one-CPU affinity) */
        while (atomic_load(&l.rwaiters) == 0)
            usleep(1000);
        ty_rwlock_wrunlock(&l); /* wakes the reader */
        ty_rwlock_wrlock(&l);
        entered = atomic_load(&r.entered);
        ty_rwlock_wrunlock(&l);
        pthread_join(late, NULL);
        assert_int_equal(atomic_load(&r.left), 1);
        conclusive += !entered;
        ty_rwlock_destroy(&l);
    }
    assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
    assert_true(conclusive > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_and_names),
        cmocka_unit_test(test_inherited),
        cmocka_unit_test(test_upstream_nice_is_the_thread_s),
        cmocka_unit_test(test_bell_ticket_and_deadline),
        cmocka_unit_test(test_bell_wakes_all),
        cmocka_unit_test(test_rwlock_excludes),
        cmocka_unit_test(test_rwlock_prefers_writer),
        cmocka_unit_test(test_rwlock_sleeper_holds_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
