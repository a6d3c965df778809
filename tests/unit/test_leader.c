/* test_leader.c - leader election on a Lease (client/leader.h).
 *
 * Most tests drive thread-less electors step by step (kc_leader_try) over
 * the fake client with a clock of their own, so nothing sleeps and nothing
 * depends on the machine's speed. A stale read is played by a client that
 * wraps the fake and answers one get from a snapshot, so a write based on it
 * meets the server's resourceVersion check as it would in a real race. The
 * last tests run electors over HTTP against Trainyard's server on a
 * loopback port, stepped and then on their own threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_fixture.h"

#include "api/kinds.h"
#include "base/timeutil.h"
#include "client/kc_fake.h"
#include "client/kc_http.h"
#include "client/leader.h"
#include "server/server.h"

#define NS "kube-system"
#define LEASE "trainyard-operator"
#define T0 1795878000000LL /* 2026-11-28T15:00:00Z in ms */
#define DEADLINE_MS 30000

static const char *lease_key(void)
{
    return api_store_key(&api_lease);
}

/* ---- a clock and callbacks the tests see ---- */

typedef struct clk {
    int64_t ms;
} clk;

static int64_t clk_now(void *arg)
{
    return ((clk *)arg)->ms;
}

typedef struct seen {
    int started, stopped, new_leader;
    char leader[256];
    pthread_mutex_t mu;
} seen;

static void on_started(void *arg)
{
    seen *s = arg;
    pthread_mutex_lock(&s->mu);
    s->started++;
    pthread_mutex_unlock(&s->mu);
}

static void on_stopped(void *arg)
{
    seen *s = arg;
    pthread_mutex_lock(&s->mu);
    s->stopped++;
    pthread_mutex_unlock(&s->mu);
}

static void on_new(const char *id, void *arg)
{
    seen *s = arg;
    pthread_mutex_lock(&s->mu);
    s->new_leader++;
    snprintf(s->leader, sizeof(s->leader), "%s", id);
    pthread_mutex_unlock(&s->mu);
}

static int count_of(seen *s, const int *field)
{
    int n;
    pthread_mutex_lock(&s->mu);
    n = *field;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* The count once it is want, or what it is at DEADLINE_MS: a callback runs
 * on the elector's thread just after it says it leads. */
static int count_becomes(seen *s, const int *field, int want)
{
    int64_t end = ty_now_ms() + DEADLINE_MS;
    int n;

    while ((n = count_of(s, field)) != want && ty_now_ms() < end)
        usleep(10000);
    return n;
}

static kc_leader *elector(ty_kc *kc, const char *id, clk *c, seen *s)
{
    kc_leader_opts o = {.ns = NS, .name = LEASE, .identity = id,
                        .on_started_leading = on_started, .on_stopped_leading = on_stopped,
                        .on_new_leader = on_new, .arg = s,
                        .clock = c ? clk_now : NULL, .clock_arg = c};
    ty_error err;
    kc_leader *le;

    ty_error_init(&err);
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    le = kc_leader_new(kc, &o, &err);
    if (!le)
        fail_msg("kc_leader_new: %s", err.text);
    assert_string_equal(kc_leader_identity(le), id);
    return le;
}

/* The Lease's spec (a copy the caller decrefs), or NULL when none. */
static json_t *spec_of(ty_kc *kc)
{
    ty_obj *o = kc_get(kc, lease_key(), NS, LEASE, NULL);
    json_t *spec;

    if (!o)
        return NULL;
    spec = json_deep_copy(json_object_get(ty_obj_json(o), "spec"));
    ty_obj_unref(o);
    return spec;
}

static const char *str(const json_t *spec, const char *k)
{
    const char *s = json_string_value(json_object_get(spec, k));
    return s ? s : "";
}

static long long num(const json_t *spec, const char *k)
{
    return (long long)json_integer_value(json_object_get(spec, k));
}

/* ---- a client that answers one get from the past ---- */

typedef struct stale_kc {
    ty_kc base;
    ty_kc *inner;
    ty_obj *snapshot;   /* the next get's answer, once */
    bool not_found;     /* the next get says NotFound, once */
} stale_kc;

static ty_obj *stale_get(ty_kc *c, const char *res, const char *ns, const char *name,
                         ty_error *err)
{
    stale_kc *k = (stale_kc *)c;
    ty_obj *o;

    if (k->snapshot) {
        o = k->snapshot;
        k->snapshot = NULL;
        return o;
    }
    if (k->not_found) {
        k->not_found = false;
        ty_seterr(err, TY_ENOTFOUND, "leases.coordination.k8s.io \"%s\" not found", name);
        return NULL;
    }
    return kc_get(k->inner, res, ns, name, err);
}

static ty_obj *stale_create(ty_kc *c, const char *res, const char *ns, json_t *obj,
                            ty_error *err)
{
    return kc_create(((stale_kc *)c)->inner, res, ns, obj, err);
}

static ty_obj *stale_update(ty_kc *c, const char *res, const char *ns, const json_t *obj,
                            ty_error *err)
{
    return kc_update(((stale_kc *)c)->inner, res, ns, obj, err);
}

static void stale_free(ty_kc *c)
{
    stale_kc *k = (stale_kc *)c;
    ty_obj_unref(k->snapshot);
    free(k);
}

static const kc_ops stale_ops = {.kind = "stale", .get = stale_get, .create = stale_create,
                                 .update = stale_update, .free = stale_free};

static stale_kc *stale_new(ty_kc *inner)
{
    stale_kc *k = calloc(1, sizeof(*k));
    assert_non_null(k);
    k->base.ops = &stale_ops;
    k->inner = inner;
    return k;
}

/* ---- tests over the fake ---- */

static void test_acquire_empty(void **state)
{
    ty_kc *kc = kc_fake_new();
    clk c = {T0};
    seen sa;
    kc_leader *a = elector(kc, "a", &c, &sa);
    json_t *spec;
    (void)state;

    assert_int_equal(kc_leader_state_now(a), KC_LEADER_FOLLOWING);
    assert_false(kc_leader_is_leader(a));
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_true(kc_leader_is_leader(a));
    assert_int_equal(sa.started, 1);
    assert_int_equal(sa.new_leader, 1);
    assert_string_equal(sa.leader, "a");
    spec = spec_of(kc);
    assert_non_null(spec);
    assert_string_equal(str(spec, "holderIdentity"), "a");
    assert_int_equal(num(spec, "leaseDurationSeconds"), 15);
    assert_int_equal(num(spec, "leaseTransitions"), 0);
    assert_string_equal(str(spec, "acquireTime"), "2026-11-28T15:00:00.000000Z");
    assert_string_equal(str(spec, "renewTime"), "2026-11-28T15:00:00.000000Z");
    json_decref(spec);
    assert_int_equal(kc_fake_count(kc, "create", lease_key()), 1);
    char holder[64];
    kc_leader_holder(a, holder, sizeof(holder));
    assert_string_equal(holder, "a");

    /* a renewal moves renewTime only */
    c.ms += 2000;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    spec = spec_of(kc);
    assert_string_equal(str(spec, "acquireTime"), "2026-11-28T15:00:00.000000Z");
    assert_string_equal(str(spec, "renewTime"), "2026-11-28T15:00:02.000000Z");
    assert_int_equal(num(spec, "leaseTransitions"), 0);
    json_decref(spec);
    assert_int_equal(sa.started, 1);
    assert_int_equal(sa.new_leader, 1);
    /* a renewal writes without reading first; when someone else wrote the
     * Lease meanwhile (a label), that write conflicts and the elector reads
     * and writes again */
    kc_fake_clear_actions(kc);
    c.ms += 2000;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_fake_count(kc, NULL, NULL), 1);
    ty_obj *cur = kc_get(kc, lease_key(), NS, LEASE, NULL);
    json_t *labelled = ty_obj_json_copy(cur);
    ty_obj_unref(cur);
    json_object_set_new(json_object_get(labelled, "metadata"), "labels",
                        json_pack("{s:s}", "app", "trainyard"));
    ty_obj_unref(kc_update(kc, lease_key(), NS, labelled, NULL));
    json_decref(labelled);
    kc_fake_clear_actions(kc);
    c.ms += 2000;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    const kc_fake_action *acts;
    size_t nacts;
    acts = kc_fake_actions(kc, &nacts);
    assert_int_equal(nacts, 2);
    assert_int_equal(acts[0].code, TY_ECONFLICT);
    assert_int_equal(acts[1].code, TY_OK);
    spec = spec_of(kc);
    assert_string_equal(str(spec, "renewTime"), "2026-11-28T15:00:06.000000Z");
    json_decref(spec);
    kc_leader_free(a); /* a clean stop gives the lease up */
    assert_int_equal(sa.stopped, 1);
    spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "");
    assert_int_equal(num(spec, "leaseDurationSeconds"), 1);
    json_decref(spec);
    kc_free(kc);
}

static void test_second_waits_while_renewed(void **state)
{
    ty_kc *kc = kc_fake_new();
    clk c = {T0};
    seen sa, sb;
    kc_leader *a = elector(kc, "a", &c, &sa), *b = elector(kc, "b", &c, &sb);
    (void)state;

    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    /* a minute of renewals: b never gets it, however old each record is to
     * b by the time it looks */
    for (int i = 0; i < 30; i++) {
        assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
        c.ms += 2000;
        assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    }
    assert_int_equal(sb.started, 0);
    assert_int_equal(sb.new_leader, 1);
    assert_string_equal(sb.leader, "a");
    assert_false(kc_leader_is_leader(b));
    json_t *spec = spec_of(kc);
    assert_int_equal(num(spec, "leaseTransitions"), 0);
    json_decref(spec);
    kc_leader_free(b);
    assert_int_equal(sb.stopped, 0); /* it never led */
    kc_leader_free(a);
    kc_free(kc);
}

static void test_takeover_after_expiry(void **state)
{
    ty_kc *kc = kc_fake_new();
    clk c = {T0};
    seen sa, sb;
    kc_leader *a = elector(kc, "a", &c, &sa), *b = elector(kc, "b", &c, &sb);
    json_t *spec;
    (void)state;

    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    c.ms += 1000;
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING); /* b sees a's record */
    /* a stops renewing (it died): b waits a lease duration from when it saw
     * the record, on its own clock */
    c.ms += 14999;
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    c.ms += 1;
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_LEADING);
    assert_int_equal(sb.started, 1);
    assert_string_equal(sb.leader, "b");
    spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "b");
    assert_int_equal(num(spec, "leaseTransitions"), 1);
    assert_string_equal(str(spec, "acquireTime"), "2026-11-28T15:00:16.000000Z");
    json_decref(spec);
    /* a comes back: it sees b holding the lease and stops leading at once */
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_DONE);
    assert_int_equal(sa.stopped, 1);
    assert_string_equal(sa.leader, "b");
    assert_false(kc_leader_is_leader(a));
    size_t writes = kc_fake_count(kc, NULL, NULL);
    assert_int_equal(kc_leader_try(a, c.ms + 60000), KC_LEADER_DONE); /* tries nothing more */
    assert_int_equal(kc_fake_count(kc, NULL, NULL), writes);
    kc_leader_free(a);
    assert_int_equal(sa.stopped, 1);
    spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "b"); /* a's stop left b's lease alone */
    json_decref(spec);
    kc_leader_free(b);
    kc_free(kc);
}

/* A holder's renewTime says nothing to the others: a record years old, or
 * from the future, is valid for a lease duration from when it was seen. */
static void test_remote_times_not_trusted(void **state)
{
    static const char *const times[] = {"2001-01-01T00:00:00.000000Z",
                                        "2099-01-01T00:00:00.000000Z"};
    (void)state;

    for (int i = 0; i < 2; i++) {
        ty_kc *kc = kc_fake_new();
        clk c = {T0};
        seen sb;
        ty_error err;
        ty_error_init(&err);
        json_t *l = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:i}}",
                              "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
                              "metadata", "name", LEASE, "namespace", NS, "spec",
                              "holderIdentity", "x", "leaseDurationSeconds", 15,
                              "acquireTime", times[i], "renewTime", times[i],
                              "leaseTransitions", 4);
        ty_obj_unref(kc_fake_put(kc, lease_key(), l, &err));
        kc_leader *b = elector(kc, "b", &c, &sb);
        assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
        c.ms += 14999;
        assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
        c.ms += 1;
        assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_LEADING);
        json_t *spec = spec_of(kc);
        assert_int_equal(num(spec, "leaseTransitions"), 5);
        json_decref(spec);
        kc_leader_free(b);
        kc_free(kc);
    }
}

/* A Lease made by hand, with no spec, is nobody's. */
static void test_lease_without_spec(void **state)
{
    ty_kc *kc = kc_fake_new();
    clk c = {T0};
    seen sa;
    ty_error err;
    (void)state;

    ty_error_init(&err);
    ty_obj_unref(kc_fake_put(kc, lease_key(),
                             json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion",
                                       "coordination.k8s.io/v1", "kind", "Lease", "metadata",
                                       "name", LEASE, "namespace", NS), &err));
    kc_leader *a = elector(kc, "a", &c, &sa);
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    json_t *spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "a");
    assert_int_equal(num(spec, "leaseTransitions"), 1);
    json_decref(spec);
    kc_leader_free(a);
    kc_free(kc);
}

static void test_release_hands_over_at_once(void **state)
{
    ty_kc *kc = kc_fake_new();
    clk c = {T0};
    seen sa, sb, sa2;
    kc_leader *a = elector(kc, "a", &c, &sa), *b = elector(kc, "b", &c, &sb);
    ty_error err;
    json_t *spec;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    c.ms += 500;
    assert_int_equal(kc_leader_release(a, c.ms, &err), 0);
    assert_int_equal(kc_leader_state_now(a), KC_LEADER_DONE);
    assert_int_equal(sa.stopped, 1);
    spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "");
    assert_int_equal(num(spec, "leaseDurationSeconds"), 1);
    assert_int_equal(num(spec, "leaseTransitions"), 0);
    json_decref(spec);
    /* b takes it at its next try, not a lease duration later */
    c.ms += 1;
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_LEADING);
    assert_int_equal(sb.new_leader, 2); /* "a", then itself ("" was never seen by b) */
    spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "b");
    assert_int_equal(num(spec, "leaseTransitions"), 1);
    json_decref(spec);

    /* and back to a new "a": every change of holder counts */
    kc_leader *a2 = elector(kc, "a", &c, &sa2);
    assert_int_equal(kc_leader_try(a2, c.ms), KC_LEADER_FOLLOWING);
    kc_leader_stop(b);
    assert_int_equal(sb.stopped, 1);
    assert_int_equal(kc_leader_try(a2, c.ms), KC_LEADER_LEADING);
    spec = spec_of(kc);
    assert_int_equal(num(spec, "leaseTransitions"), 2);
    json_decref(spec);
    /* releasing twice, or a follower's release, writes nothing */
    size_t writes = kc_fake_count(kc, NULL, NULL);
    assert_int_equal(kc_leader_release(b, c.ms, &err), 0);
    assert_int_equal(kc_leader_release(a, c.ms, &err), 0);
    assert_int_equal(kc_fake_count(kc, NULL, NULL), writes);
    kc_leader_free(a);
    kc_leader_free(b);
    kc_leader_free(a2);
    kc_free(kc);
}

/* Two candidates read the same free lease and both write: the second write
 * carries a resourceVersion that is no longer current, and loses. */
static void test_conflict_one_wins(void **state)
{
    ty_kc *kc = kc_fake_new();
    stale_kc *sk = stale_new(kc);
    clk c = {T0};
    seen sa, sb;
    kc_leader *a = elector(kc, "a", &c, &sa), *b = elector(&sk->base, "b", &c, &sb);
    json_t *spec;
    (void)state;

    /* both find no lease: a creates it, b's create finds it taken */
    sk->not_found = true;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    assert_int_equal(sb.started, 0);
    assert_int_equal(kc_fake_count(kc, "create", lease_key()), 2);

    /* a gives it up; both read the free lease, a writes first */
    c.ms += 1000;
    kc_leader_stop(a);
    sk->snapshot = kc_get(kc, lease_key(), NS, LEASE, NULL);
    seen sa2;
    kc_leader *a2 = elector(kc, "a2", &c, &sa2);
    assert_int_equal(kc_leader_try(a2, c.ms), KC_LEADER_LEADING);
    kc_fake_clear_actions(kc);
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    const kc_fake_action *w = kc_fake_find(kc, "update", lease_key(), LEASE);
    assert_non_null(w);
    assert_int_equal(w->code, TY_ECONFLICT);
    spec = spec_of(kc);
    assert_string_equal(str(spec, "holderIdentity"), "a2");
    assert_int_equal(num(spec, "leaseTransitions"), 1);
    json_decref(spec);
    /* b's next look sees a2's record and waits for it */
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    assert_string_equal(sb.leader, "a2");
    kc_leader_free(a);
    kc_leader_free(a2);
    kc_leader_free(b);
    kc_free(&sk->base);
    kc_free(kc);
}

static void test_renew_deadline(void **state)
{
    ty_kc *kc = kc_fake_new();
    clk c = {T0};
    seen sa;
    kc_leader *a = elector(kc, "a", &c, &sa);
    (void)state;

    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    /* the API server refuses every write from now on (two a try: the
     * leader's write without a read, then after one) */
    for (int i = 0; i < 32; i++)
        kc_fake_fail_next(kc, "update", lease_key(), TY_EUNAVAILABLE);
    for (int i = 1; i < 5; i++) {
        c.ms += 2000;
        assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    }
    c.ms += 1999; /* 9.999 s since the last renewal */
    assert_true(kc_leader_is_leader(a));
    c.ms += 1; /* the deadline: no longer leader, even before the next try */
    assert_false(kc_leader_is_leader(a));
    assert_int_equal(sa.stopped, 0);
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_DONE);
    assert_int_equal(sa.stopped, 1);
    assert_int_equal(sa.started, 1);
    kc_leader_free(a);
    assert_int_equal(sa.stopped, 1);
    kc_free(kc);

    /* one failed renewal within the deadline is forgiven */
    kc = kc_fake_new();
    c.ms = T0;
    a = elector(kc, "a", &c, &sa);
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    kc_fake_fail_next(kc, "get", lease_key(), TY_EUNAVAILABLE);
    c.ms += 9000;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    c.ms += 2000;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_true(kc_leader_is_leader(a));
    assert_int_equal(sa.stopped, 0);
    kc_leader_free(a);
    kc_free(kc);
}

static void test_options(void **state)
{
    ty_kc *kc = kc_fake_new();
    ty_error err;
    kc_leader *le;
    kc_leader_opts o = {.ns = NS, .name = LEASE};
    (void)state;

    ty_error_init(&err);
    le = kc_leader_new(kc, &o, &err);
    assert_non_null(le);
    /* <hostname>_<pid>-<8 hex> */
    char host[128] = "", want[160];
    gethostname(host, sizeof(host) - 1);
    snprintf(want, sizeof(want), "%s_%d-", host, (int)getpid());
    assert_int_equal(strncmp(kc_leader_identity(le), want, strlen(want)), 0);
    assert_int_equal(strlen(kc_leader_identity(le)), strlen(want) + 8);
    kc_leader_free(le);

    o.name = NULL;
    assert_null(kc_leader_new(kc, &o, &err));
    assert_int_equal(err.code, TY_EINVALID);
    o.name = LEASE;
    o.lease_duration_ms = 10000; /* not above the renew deadline */
    assert_null(kc_leader_new(kc, &o, &err));
    assert_string_equal(err.text, "leaseDuration must be greater than renewDeadline");
    o.lease_duration_ms = 0;
    o.retry_period_ms = 9000; /* 1.2 x 9 s > 10 s */
    assert_null(kc_leader_new(kc, &o, &err));
    assert_string_equal(err.text, "renewDeadline must be greater than retryPeriod*JitterFactor");
    kc_free(kc);
}

/* ---- over HTTP, against Trainyard's server ---- */

typedef struct hfx {
    char dir[64];
    ty_store *s;
    ty_server *srv;
    ty_kc *ka, *kb;
} hfx;

static int setup_http(void **state)
{
    hfx *f = calloc(1, sizeof(*f));
    server_opts so = {.address = "127.0.0.1", .port = 0};
    ty_error err;
    char url[64];
    kc_http_opts o = {.server = url, .qps = -1};

    ty_error_init(&err);
    assert_non_null(f);
    f->s = store_fixture_open(f->dir, NULL);
    so.data_dir = f->dir;
    f->srv = server_start(f->s, &so, &err);
    if (!f->srv)
        fail_msg("server_start: %s", err.text);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)server_port(f->srv));
    f->ka = kc_http_new(&o, &err);
    f->kb = kc_http_new(&o, &err);
    assert_non_null(f->ka);
    assert_non_null(f->kb);
    /* the namespace the operators share */
    ty_obj_unref(kc_create(f->ka, "namespaces", "",
                           json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
                                     "Namespace", "metadata", "name", NS), &err));
    *state = f;
    return 0;
}

static int teardown_http(void **state)
{
    hfx *f = *state;

    kc_free(f->ka);
    kc_free(f->kb);
    server_stop(f->srv);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

/* The stepped scenario over the real API: what the elector writes passes
 * the server's validation, conflicts are the server's. */
static void test_http_stepped(void **state)
{
    hfx *f = *state;
    clk c = {T0};
    seen sa, sb;
    kc_leader *a = elector(f->ka, "a", &c, &sa), *b = elector(f->kb, "b", &c, &sb);
    ty_error err;
    json_t *spec;

    ty_error_init(&err);
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    c.ms += 2000;
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_FOLLOWING);
    spec = spec_of(f->kb);
    assert_string_equal(str(spec, "holderIdentity"), "a");
    assert_string_equal(str(spec, "renewTime"), "2026-11-28T15:00:02.000000Z");
    json_decref(spec);
    /* a dies; b takes over a lease duration after it last saw a change */
    c.ms += 15000;
    assert_int_equal(kc_leader_try(b, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_leader_try(a, c.ms), KC_LEADER_DONE);
    /* b releases; a fresh candidate takes it at once */
    assert_int_equal(kc_leader_release(b, c.ms, &err), 0);
    seen sc;
    kc_leader *c2 = elector(f->ka, "c", &c, &sc);
    assert_int_equal(kc_leader_try(c2, c.ms), KC_LEADER_LEADING);
    spec = spec_of(f->ka);
    assert_string_equal(str(spec, "holderIdentity"), "c");
    assert_int_equal(num(spec, "leaseTransitions"), 2);
    json_decref(spec);

    /* c gives it up; d and e both read the free lease, e writes first, and
     * d's write, based on a read that is no longer current, is the
     * server's 409 */
    assert_int_equal(kc_leader_release(c2, c.ms, &err), 0);
    stale_kc *sk = stale_new(f->kb);
    sk->snapshot = kc_get(f->kb, lease_key(), NS, LEASE, NULL);
    assert_non_null(sk->snapshot);
    seen sd, se;
    kc_leader *d = elector(&sk->base, "d", &c, &sd), *e = elector(f->kb, "e", &c, &se);
    assert_int_equal(kc_leader_try(e, c.ms), KC_LEADER_LEADING);
    assert_int_equal(kc_leader_try(d, c.ms), KC_LEADER_FOLLOWING);
    assert_int_equal(sd.started, 0);
    spec = spec_of(f->ka);
    assert_string_equal(str(spec, "holderIdentity"), "e");
    assert_int_equal(num(spec, "leaseTransitions"), 3);
    json_decref(spec);
    kc_leader_free(e);
    kc_leader_free(d);
    kc_leader_free(a);
    kc_leader_free(b);
    kc_leader_free(c2);
    kc_free(&sk->base);
}

static bool wait_until(kc_leader *le, bool leader)
{
    int64_t end = ty_now_ms() + DEADLINE_MS;

    while (ty_now_ms() < end) {
        if (kc_leader_is_leader(le) == leader)
            return true;
        usleep(10000);
    }
    return false;
}

/* Two electors on their own threads: one leads; when it stops, the other
 * takes over without waiting for the lease to expire. */
static void test_http_threads(void **state)
{
    hfx *f = *state;
    seen sa, sb;
    /* a short retry keeps the test quick; a long deadline keeps a loaded
     * machine's stalls from costing the leader its lease mid-test */
    kc_leader_opts o = {.ns = NS, .name = LEASE, .lease_duration_ms = 40000,
                        .renew_deadline_ms = 30000, .retry_period_ms = 100,
                        .on_started_leading = on_started, .on_stopped_leading = on_stopped,
                        .on_new_leader = on_new};
    ty_error err;
    kc_leader *a, *b, *first, *second;
    seen *sf, *ss;

    ty_error_init(&err);
    memset(&sa, 0, sizeof(sa));
    memset(&sb, 0, sizeof(sb));
    pthread_mutex_init(&sa.mu, NULL);
    pthread_mutex_init(&sb.mu, NULL);
    o.identity = "a";
    o.arg = &sa;
    a = kc_leader_start(f->ka, &o, &err);
    assert_non_null(a);
    o.identity = "b";
    o.arg = &sb;
    b = kc_leader_start(f->kb, &o, &err);
    assert_non_null(b);
    /* one of them leads (which one is the race's) */
    int64_t end = ty_now_ms() + DEADLINE_MS;
    while (!kc_leader_is_leader(a) && !kc_leader_is_leader(b) && ty_now_ms() < end)
        usleep(10000);
    first = kc_leader_is_leader(a) ? a : b;
    second = first == a ? b : a;
    sf = first == a ? &sa : &sb;
    ss = first == a ? &sb : &sa;
    assert_true(kc_leader_is_leader(first));
    assert_int_equal(count_becomes(sf, &sf->started, 1), 1);
    kc_leader_stop(first);
    assert_int_equal(count_of(sf, &sf->stopped), 1);
    assert_false(kc_leader_is_leader(first));
    assert_true(wait_until(second, true));
    assert_int_equal(count_becomes(ss, &ss->started, 1), 1);
    json_t *spec = spec_of(f->ka);
    assert_string_equal(str(spec, "holderIdentity"), kc_leader_identity(second));
    assert_true(num(spec, "leaseTransitions") >= 1);
    json_decref(spec);
    kc_leader_free(first);
    kc_leader_free(second);
    assert_int_equal(count_of(ss, &ss->stopped), 1);
    spec = spec_of(f->ka);
    assert_string_equal(str(spec, "holderIdentity"), "");
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acquire_empty),
        cmocka_unit_test(test_second_waits_while_renewed),
        cmocka_unit_test(test_takeover_after_expiry),
        cmocka_unit_test(test_remote_times_not_trusted),
        cmocka_unit_test(test_lease_without_spec),
        cmocka_unit_test(test_release_hands_over_at_once),
        cmocka_unit_test(test_conflict_one_wins),
        cmocka_unit_test(test_renew_deadline),
        cmocka_unit_test(test_options),
        cmocka_unit_test_setup_teardown(test_http_stepped, setup_http, teardown_http),
        cmocka_unit_test_setup_teardown(test_http_threads, setup_http, teardown_http),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
