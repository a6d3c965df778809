/* sched_metrics.c - the scheduler's Prometheus metrics under Volcano's
 * names and labels, so that dashboards made for volcano-scheduler work:
 * the session latency and the unschedulable and preemption counts from
 * each cycle, and per-queue gauges (allocated, request, deserved,
 * capacity, weight, share, overused, PodGroups by phase) that the
 * scheduler's thread writes into a snapshot once a second and a collector
 * copies at each scrape (the model is the scheduler thread's alone). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/metrics.h"
#include "scheduler/sched_int.h"

/* Volcano's buckets: 5 ms doubling ten times. */
static const double session_bounds[] = {5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560};

static void collect(ty_buf *out, void *arg)
{
    ty_sched *sc = arg;

    pthread_mutex_lock(&sc->metrics_mu);
    if (sc->metrics_text.len)
        ty_buf_append(out, sc->metrics_text.data, sc->metrics_text.len);
    pthread_mutex_unlock(&sc->metrics_mu);
}

void sched_metrics_start(ty_sched *sc)
{
    ty_metric_declare_histogram("volcano_e2e_scheduling_latency_milliseconds",
                                "E2e scheduling latency in milliseconds (scheduling algorithm + "
                                "binding)",
                                session_bounds, sizeof(session_bounds) / sizeof(session_bounds[0]));
    ty_metric_declare("volcano_unschedule_job_counts", TY_GAUGE,
                      "Number of jobs could not be scheduled");
    ty_metric_declare("volcano_pod_preemption_victims", TY_GAUGE,
                      "Number of selected preemption victims");
    ty_metric_declare("volcano_total_preemption_attempts", TY_COUNTER,
                      "Total preemption attempts in the cluster till now");
    ty_metric_declare("volcano_schedule_attempts_total", TY_COUNTER,
                      "Number of attempts to schedule pods, by the result");
    pthread_mutex_init(&sc->metrics_mu, NULL);
    sc->metrics_on = ty_metrics_add_collector(collect, sc) == 0;
}

void sched_metrics_stop(ty_sched *sc)
{
    if (sc->metrics_on)
        ty_metrics_remove_collector(collect, sc);
    sc->metrics_on = false;
    ty_buf_free(&sc->metrics_text);
    pthread_mutex_destroy(&sc->metrics_mu);
}

void sched_metrics_cycle(ty_sched *sc, double ms, const sc_cycle_stats *st)
{
    (void)sc;
    ty_metric_observe("volcano_e2e_scheduling_latency_milliseconds", NULL, ms);
    ty_metric_set("volcano_unschedule_job_counts", NULL, (double)st->jobs_unschedulable);
    ty_metric_set("volcano_pod_preemption_victims", NULL, (double)st->evicted);
    if (st->evicted)
        ty_metric_add("volcano_total_preemption_attempts", NULL, 1);
    if (st->bound)
        ty_metric_add("volcano_schedule_attempts_total", "result=\"scheduled\"",
                      (double)st->bound);
    if (st->jobs_unschedulable)
        ty_metric_add("volcano_schedule_attempts_total", "result=\"unschedulable\"",
                      (double)st->jobs_unschedulable);
}

/* name's HELP and TYPE lines, then one series per queue: of the milli-CPU,
 * the memory bytes or the scalar resources (a series per resource) of
 * what pick returns for it. */
typedef const sc_res *(*res_pick)(const sc_queue_view *v);
static const sc_res *pick_allocated(const sc_queue_view *v) { return v->allocated; }
static const sc_res *pick_request(const sc_queue_view *v) { return v->request; }
static const sc_res *pick_deserved(const sc_queue_view *v) { return v->deserved; }
static const sc_res *pick_inqueue(const sc_queue_view *v) { return v->inqueue; }
static const sc_res *pick_capability(const sc_queue_view *v) { return v->capability; }

static void write_res(ty_buf *b, sc_cluster *c, const char *what, res_pick pick, bool capability)
{
    static const char *const suffix[] = {"milli_cpu", "memory_bytes", "scalar_resources"};
    size_t nq = sc_queue_count(c);
    char qn[512], rn[512]; /* label values escaped: a name never ends its line */

    for (int kind = 0; kind < 3; kind++) {
        ty_buf_printf(b, "# HELP volcano_queue_%s_%s %s %s for one queue\n"
                         "# TYPE volcano_queue_%s_%s gauge\n",
                      what, suffix[kind], what,
                      kind == 0 ? "CPU (millicores)" : kind == 1 ? "memory" : "scalar resource",
                      what, suffix[kind]);
        for (size_t k = 0; k < nq; k++) {
            const sc_queue *q = sc_queue_at(c, k);
            sc_queue_view v;
            if (!sc_queue_defined(q))
                continue;
            sc_queue_view_of(q, &v);
            const sc_res *r = pick(&v);
            if (kind == 0 && (!capability || (v.cap_mask & (1u << SC_CPU))))
                ty_buf_printf(b, "volcano_queue_%s_milli_cpu{queue_name=\"%s\"} %lld\n", what,
                              ty_metric_label_escape(sc_queue_name(q), qn, sizeof(qn)), (long long)r->v[SC_CPU]);
            else if (kind == 1 && (!capability || (v.cap_mask & (1u << SC_MEM))))
                ty_buf_printf(b, "volcano_queue_%s_memory_bytes{queue_name=\"%s\"} %lld\n",
                              what, ty_metric_label_escape(sc_queue_name(q), qn, sizeof(qn)), (long long)(r->v[SC_MEM] / 1000));
            else if (kind == 2)
                for (int s = SC_GPU; s < SC_UNOFFERED; s++) {
                    const char *name = sc_res_name(c, s);
                    if (!name || (capability && !(v.cap_mask & (1u << s))))
                        continue;
                    /* scalar resources in Volcano's unit: milli-units */
                    ty_buf_printf(b,
                                  "volcano_queue_%s_scalar_resources{queue_name=\"%s\","
                                  "resource=\"%s\"} %lld\n",
                                  what, ty_metric_label_escape(sc_queue_name(q), qn, sizeof(qn)),
                                  ty_metric_label_escape(name, rn, sizeof(rn)), (long long)r->v[s]);
                }
        }
    }
}

void sched_metrics_queues(ty_sched *sc, const int (*counts)[4])
{
    static const char *const phases[] = {"pending", "inqueue", "running"};
    sc_cluster *c = sc->cluster;
    size_t nq = sc_queue_count(c);
    char qn[512];
    ty_buf b = {0};

    if (!sc->metrics_on)
        return;
    write_res(&b, c, "allocated", pick_allocated, false);
    write_res(&b, c, "request", pick_request, false);
    write_res(&b, c, "deserved", pick_deserved, false);
    write_res(&b, c, "inqueue", pick_inqueue, false);
    write_res(&b, c, "capacity", pick_capability, true);
    ty_buf_printf(&b, "# HELP volcano_queue_weight Weight for one queue\n"
                      "# TYPE volcano_queue_weight gauge\n");
    for (size_t k = 0; k < nq; k++) {
        sc_queue_view v;
        if (!sc_queue_defined(sc_queue_at(c, k)))
            continue;
        sc_queue_view_of(sc_queue_at(c, k), &v);
        ty_buf_printf(&b, "volcano_queue_weight{queue_name=\"%s\"} %d\n",
                      ty_metric_label_escape(sc_queue_name(sc_queue_at(c, k)), qn, sizeof(qn)), v.weight);
    }
    ty_buf_printf(&b, "# HELP volcano_queue_share Share for one queue\n"
                      "# TYPE volcano_queue_share gauge\n");
    for (size_t k = 0; k < nq; k++) {
        sc_queue_view v;
        if (!sc_queue_defined(sc_queue_at(c, k)))
            continue;
        sc_queue_view_of(sc_queue_at(c, k), &v);
        ty_buf_printf(&b, "volcano_queue_share{queue_name=\"%s\"} %g\n",
                      ty_metric_label_escape(sc_queue_name(sc_queue_at(c, k)), qn, sizeof(qn)), v.share);
    }
    /* overused as the proportion plugin judges it: what it deserves is
     * all held already */
    ty_buf_printf(&b, "# HELP volcano_queue_overused If one queue is overused\n"
                      "# TYPE volcano_queue_overused gauge\n");
    for (size_t k = 0; k < nq; k++) {
        sc_queue_view v;
        if (!sc_queue_defined(sc_queue_at(c, k)))
            continue;
        sc_queue_view_of(sc_queue_at(c, k), &v);
        bool over = !sc_res_empty(v.allocated) && sc_res_le(v.deserved, v.allocated);
        ty_buf_printf(&b, "volcano_queue_overused{queue_name=\"%s\"} %d\n",
                      ty_metric_label_escape(sc_queue_name(sc_queue_at(c, k)), qn, sizeof(qn)), over ? 1 : 0);
    }
    for (int p = 0; p < 4; p++) {
        const char *ph = p < 3 ? phases[p] : "unknown";
        ty_buf_printf(&b, "# HELP volcano_queue_pod_group_%s_count The number of %s PodGroup "
                          "in this queue\n# TYPE volcano_queue_pod_group_%s_count gauge\n",
                      ph, ph, ph);
        for (size_t k = 0; k < nq; k++) {
            if (!sc_queue_defined(sc_queue_at(c, k)))
                continue;
            /* counts' columns are sc_job_phase's; Volcano has no unknown we keep */
            ty_buf_printf(&b, "volcano_queue_pod_group_%s_count{queue_name=\"%s\"} %d\n", ph,
                          ty_metric_label_escape(sc_queue_name(sc_queue_at(c, k)), qn, sizeof(qn)),
                          p == 0   ? counts[k][SC_JOB_PENDING]
                          : p == 1 ? counts[k][SC_JOB_INQUEUE]
                          : p == 2 ? counts[k][SC_JOB_RUNNING]
                                   : 0);
        }
    }
    pthread_mutex_lock(&sc->metrics_mu);
    ty_buf_free(&sc->metrics_text);
    sc->metrics_text = b;
    pthread_mutex_unlock(&sc->metrics_mu);
}
