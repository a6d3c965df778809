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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_and_names),
        cmocka_unit_test(test_inherited),
        cmocka_unit_test(test_bell_ticket_and_deadline),
        cmocka_unit_test(test_bell_wakes_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
