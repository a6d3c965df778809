/* test_thread.c - thread names and scheduling classes (base/thread.c) on
 * real threads, read back from the kernel. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_and_names),
        cmocka_unit_test(test_inherited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
