/* gpu.c - the GPUs of this machine, read through NVML at run time (gpu.h).
 *
 * Only the few NVML entry points below are used, declared here from the
 * documented C API (no NVIDIA header): every call returns an nvmlReturn_t,
 * 0 = NVML_SUCCESS. A missing optional entry point or a failing device
 * call leaves that reading out of the sample; the device stays. */
#include "runtime/local/gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/thread.h"

#define NVML_SUCCESS 0
#define NVML_TEMPERATURE_GPU 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_EVENT_XID_CRITICAL 0x8ull  /* nvmlEventTypeXidCriticalError */
#define NVML_NAME_LEN 96                /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_UUID_LEN 96                /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define XID_DRAIN_MAX 64                /* events taken per sample */

typedef void *nvml_dev;
typedef void *nvml_evset;
typedef struct { unsigned int gpu, memory; } nvml_util;                   /* nvmlUtilization_t */
typedef struct { unsigned long long total, free, used; } nvml_mem;        /* nvmlMemory_t, bytes */
typedef struct {                                                          /* nvmlMemory_v2_t */
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvml_mem2;
/* nvmlMemory_v2: the struct's size and version 2 in the top byte. */
#define NVML_MEMORY_V2 ((unsigned int)sizeof(nvml_mem2) | (2u << 24))
typedef struct {                                                          /* nvmlEventData_t */
    nvml_dev device;
    unsigned long long type, data;
    unsigned int gpu_instance, compute_instance;
} nvml_event;

typedef struct nvml_api {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned int *);
    int (*handle)(unsigned int, nvml_dev *);
    int (*uuid)(nvml_dev, char *, unsigned int);
    int (*name)(nvml_dev, char *, unsigned int);
    int (*minor)(nvml_dev, unsigned int *);
    int (*util)(nvml_dev, nvml_util *);
    int (*mem)(nvml_dev, nvml_mem *);
    int (*mem2)(nvml_dev, nvml_mem2 *);
    int (*temp)(nvml_dev, int, unsigned int *);
    int (*power)(nvml_dev, unsigned int *);
    int (*ecc)(nvml_dev, int, int, unsigned long long *);
    int (*ev_create)(nvml_evset *);
    int (*ev_register)(nvml_dev, unsigned long long, nvml_evset);
    int (*ev_wait)(nvml_evset, nvml_event *, unsigned int);
    int (*ev_free)(nvml_evset);
    nvml_evset evset;
    nvml_dev dev[RT_GPU_MAX];
} nvml_api;

struct rt_gpus {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rt_gpu_source source;
    int n;
    rt_gpu_info info[RT_GPU_MAX];
    nvml_api nv;
    pthread_t thread;
    bool running, stop;
    int interval_ms;
};

/* ---- NVML ---- */

#define SYM(field, symbol) (*(void **)&nv->field = dlsym(nv->lib, symbol))

static void nvml_unload(nvml_api *nv)
{
    if (nv->evset && nv->ev_free)
        nv->ev_free(nv->evset);
    if (nv->shutdown)
        nv->shutdown();
    if (nv->lib)
        dlclose(nv->lib);
    memset(nv, 0, sizeof(*nv));
}

/* Loads NVML and opens every device: the count, or -1 (nothing held). */
static int nvml_load(nvml_api *nv, rt_gpu_info *info)
{
    const char *path = getenv(RT_GPU_NVML_ENV);
    unsigned int n = 0;

    memset(nv, 0, sizeof(*nv));
    nv->lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib)
        return -1;
    SYM(init, "nvmlInit_v2");
    SYM(count, "nvmlDeviceGetCount_v2");
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    if (!nv->init || !nv->count || !nv->handle || nv->init() != NVML_SUCCESS) {
        dlclose(nv->lib);
        memset(nv, 0, sizeof(*nv));
        return -1;
    }
    SYM(shutdown, "nvmlShutdown");
    SYM(uuid, "nvmlDeviceGetUUID");
    SYM(name, "nvmlDeviceGetName");
    SYM(minor, "nvmlDeviceGetMinorNumber");
    SYM(util, "nvmlDeviceGetUtilizationRates");
    SYM(mem, "nvmlDeviceGetMemoryInfo");
    SYM(mem2, "nvmlDeviceGetMemoryInfo_v2");
    SYM(temp, "nvmlDeviceGetTemperature");
    SYM(power, "nvmlDeviceGetPowerUsage");
    SYM(ecc, "nvmlDeviceGetTotalEccErrors");
    SYM(ev_create, "nvmlEventSetCreate");
    SYM(ev_register, "nvmlDeviceRegisterEvents");
    SYM(ev_wait, "nvmlEventSetWait_v2");
    SYM(ev_free, "nvmlEventSetFree");
    if (nv->count(&n) != NVML_SUCCESS) {
        nvml_unload(nv);
        return -1;
    }
    if (n > RT_GPU_MAX)
        n = RT_GPU_MAX;
    if (nv->ev_create && nv->ev_register && nv->ev_wait &&
        nv->ev_create(&nv->evset) != NVML_SUCCESS)
        nv->evset = NULL;
    for (unsigned int i = 0; i < n; i++) {
        rt_gpu_info *d = &info[i];
        char buf[NVML_NAME_LEN > NVML_UUID_LEN ? NVML_NAME_LEN : NVML_UUID_LEN];

        /* A device that cannot be opened still counts: it is there, and
         * the scheduler must not hand out its index to another. */
        d->index = (int)i;
        d->minor = i;
        snprintf(d->model, sizeof(d->model), "unknown");
        if (nv->handle(i, &nv->dev[i]) != NVML_SUCCESS) {
            nv->dev[i] = NULL;
            continue;
        }
        if (nv->uuid && nv->uuid(nv->dev[i], buf, sizeof(buf)) == NVML_SUCCESS) {
            buf[sizeof(buf) - 1] = '\0';
            snprintf(d->uuid, sizeof(d->uuid), "%s", buf);
        }
        if (nv->name && nv->name(nv->dev[i], buf, sizeof(buf)) == NVML_SUCCESS) {
            buf[sizeof(buf) - 1] = '\0';
            snprintf(d->model, sizeof(d->model), "%s", buf);
        }
        if (nv->minor)
            nv->minor(nv->dev[i], &d->minor);
        if (nv->evset && nv->ev_register(nv->dev[i], NVML_EVENT_XID_CRITICAL, nv->evset) ==
                             NVML_SUCCESS)
            d->has |= RT_GPU_HAS_XID;
    }
    return (int)n;
}

/* One device's readings into r (identity and holder untouched). */
static void nvml_read(nvml_api *nv, nvml_dev dev, rt_gpu_info *r)
{
    nvml_util u;
    nvml_mem m;
    nvml_mem2 m2 = {0};
    unsigned int v;
    unsigned long long ecc;

    r->has &= RT_GPU_HAS_XID;
    if (!dev)
        return;
    if (nv->util && nv->util(dev, &u) == NVML_SUCCESS) {
        r->util_pct = u.gpu;
        r->mem_util_pct = u.memory;
        r->has |= RT_GPU_HAS_UTIL;
    }
    /* v2 leaves the driver's reserved memory out of "used", as nvidia-smi
     * and DCGM do (v1 counts it: some 600 MiB on an idle H200). */
    if (nv->mem2 && (m2.version = NVML_MEMORY_V2, nv->mem2(dev, &m2) == NVML_SUCCESS)) {
        r->fb_used_mib = m2.used >> 20;
        r->fb_free_mib = m2.free >> 20;
        r->fb_total_mib = m2.total >> 20;
        r->has |= RT_GPU_HAS_MEM;
    } else if (nv->mem && nv->mem(dev, &m) == NVML_SUCCESS) {
        r->fb_used_mib = m.used >> 20;
        r->fb_free_mib = m.free >> 20;
        r->fb_total_mib = m.total >> 20;
        r->has |= RT_GPU_HAS_MEM;
    }
    if (nv->temp && nv->temp(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) {
        r->temp_c = v;
        r->has |= RT_GPU_HAS_TEMP;
    }
    if (nv->power && nv->power(dev, &v) == NVML_SUCCESS) {
        r->power_w = v / 1000.0;
        r->has |= RT_GPU_HAS_POWER;
    }
    if (nv->ecc && nv->ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc) ==
                       NVML_SUCCESS) {
        r->ecc_dbe_volatile = ecc;
        r->has |= RT_GPU_HAS_ECC;
    }
}

/* XIDs a program causes (an illegal address, a fault in its kernel...),
 * which say nothing about the GPU: as NVIDIA's device plugin skips them. */
static bool xid_is_programs(unsigned xid)
{
    static const unsigned programs[] = {13, 31, 43, 45, 68, 109};

    for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
        if (xid == programs[i])
            return true;
    return false;
}

bool rt_gpu_healthy(const rt_gpu_info *d, char *why, size_t len)
{
    if (d->bad_xid) {
        if (why)
            snprintf(why, len, "XID %u", d->bad_xid);
        return false;
    }
    if ((d->has & RT_GPU_HAS_ECC) && d->ecc_dbe_volatile > 0) {
        if (why)
            snprintf(why, len, "%llu double-bit ECC errors", d->ecc_dbe_volatile);
        return false;
    }
    if (why && len)
        *why = '\0';
    return true;
}

/* XID events since the last call, without waiting. Under g->mu. */
static void nvml_drain_xids(rt_gpus *g)
{
    nvml_api *nv = &g->nv;
    nvml_event ev;

    if (!nv->evset)
        return;
    for (int k = 0; k < XID_DRAIN_MAX; k++) {
        memset(&ev, 0, sizeof(ev));
        if (nv->ev_wait(nv->evset, &ev, 0) != NVML_SUCCESS)
            return;
        if (!(ev.type & NVML_EVENT_XID_CRITICAL))
            continue;
        for (int i = 0; i < g->n; i++) {
            if (nv->dev[i] && nv->dev[i] == ev.device) {
                g->info[i].xid_count++;
                g->info[i].last_xid = (unsigned)ev.data;
                if (!xid_is_programs((unsigned)ev.data))
                    g->info[i].bad_xid = (unsigned)ev.data;
                ty_warn("gpu %d (%s): XID %llu", i, g->info[i].uuid, ev.data);
            }
        }
    }
}

/* ---- nvidia-smi: names and UUIDs, no readings ---- */

static int smi_load(rt_gpu_info *info)
{
    FILE *p = popen("nvidia-smi -L 2>/dev/null", "r");
    char line[512];
    int n = 0;

    if (!p)
        return -1;
    /* "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5c4a...)" */
    while (fgets(line, sizeof(line), p)) {
        char *colon = strchr(line, ':'), *uuid = strstr(line, "(UUID: ");
        rt_gpu_info *d = &info[n];

        if (strncmp(line, "GPU ", 4) || !colon || n >= RT_GPU_MAX)
            continue;
        d->index = d->minor = n;
        if (uuid) {
            *uuid = '\0';
            uuid += 7;
            uuid[strcspn(uuid, ")\n")] = '\0';
            snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
        }
        colon++;
        colon += strspn(colon, " ");
        colon[strcspn(colon, "\n")] = '\0';
        for (size_t l = strlen(colon); l > 0 && colon[l - 1] == ' '; l--)
            colon[l - 1] = '\0';
        snprintf(d->model, sizeof(d->model), "%s", *colon ? colon : "unknown");
        n++;
    }
    if (pclose(p) != 0)
        return -1;
    return n;
}

/* ---- fake ---- */

static void fake_load(rt_gpu_info *info, int n)
{
    for (int i = 0; i < n; i++) {
        info[i].index = i;
        info[i].minor = (unsigned)i;
        snprintf(info[i].uuid, sizeof(info[i].uuid), "GPU-fake-0000-0000-0000-%012d", i);
        snprintf(info[i].model, sizeof(info[i].model), "%s", RT_GPU_FAKE_MODEL);
    }
}

/* Synthetic and fixed, so that tests can count on them: a held GPU is
 * busy, a free one idle. */
static void fake_read(rt_gpu_info *r)
{
    bool held = r->pod_name[0] != '\0';

    r->has = RT_GPU_HAS_UTIL | RT_GPU_HAS_MEM | RT_GPU_HAS_TEMP | RT_GPU_HAS_POWER |
             RT_GPU_HAS_ECC | RT_GPU_HAS_XID;
    r->util_pct = held ? 100 : 0;
    r->mem_util_pct = held ? 40 : 0;
    r->fb_total_mib = 16384;
    r->fb_used_mib = held ? 8192 : 0;
    r->fb_free_mib = r->fb_total_mib - r->fb_used_mib;
    r->temp_c = held ? 65 : 30;
    r->power_w = held ? 250 : 50;
    r->ecc_dbe_volatile = 0;
}

/* ---- the handle ---- */

rt_gpus *rt_gpus_open(int fake)
{
    rt_gpus *g = calloc(1, sizeof(*g));
    int n;

    if (!g)
        return NULL;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    if (fake >= 0) {
        g->source = RT_GPU_FAKE;
        g->n = fake > RT_GPU_MAX ? RT_GPU_MAX : fake;
        fake_load(g->info, g->n);
    } else if ((n = nvml_load(&g->nv, g->info)) >= 0) {
        g->source = RT_GPU_NVML;
        g->n = n;
    } else {
        memset(g->info, 0, sizeof(g->info));
        n = smi_load(g->info);
        g->source = n > 0 ? RT_GPU_SMI : RT_GPU_NONE;
        g->n = n > 0 ? n : 0;
        if (n <= 0)
            memset(g->info, 0, sizeof(g->info));
    }
    rt_gpus_sample(g);
    return g;
}

void rt_gpus_sample(rt_gpus *g)
{
    rt_gpu_info r;

    for (int i = 0; i < g->n; i++) {
        pthread_mutex_lock(&g->mu);
        r = g->info[i];
        pthread_mutex_unlock(&g->mu);
        /* NVML calls can take milliseconds: not under the lock. */
        if (g->source == RT_GPU_NVML)
            nvml_read(&g->nv, g->nv.dev[i], &r);
        else if (g->source == RT_GPU_FAKE)
            fake_read(&r);
        pthread_mutex_lock(&g->mu);
        g->info[i].has = r.has;
        g->info[i].util_pct = r.util_pct;
        g->info[i].mem_util_pct = r.mem_util_pct;
        g->info[i].fb_used_mib = r.fb_used_mib;
        g->info[i].fb_free_mib = r.fb_free_mib;
        g->info[i].fb_total_mib = r.fb_total_mib;
        g->info[i].temp_c = r.temp_c;
        g->info[i].power_w = r.power_w;
        g->info[i].ecc_dbe_volatile = r.ecc_dbe_volatile;
        pthread_mutex_unlock(&g->mu);
    }
    pthread_mutex_lock(&g->mu);
    if (g->source == RT_GPU_NVML)
        nvml_drain_xids(g);
    pthread_mutex_unlock(&g->mu);
}

static void *sampler_main(void *arg)
{
    rt_gpus *g = arg;

    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec until;

        pthread_mutex_unlock(&g->mu);
        rt_gpus_sample(g);
        pthread_mutex_lock(&g->mu);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += g->interval_ms / 1000;
        until.tv_nsec += (long)(g->interval_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!g->stop && pthread_cond_timedwait(&g->cv, &g->mu, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int rt_gpus_start(rt_gpus *g, int interval_ms)
{
    if (g->running || g->n == 0 || g->source == RT_GPU_SMI)
        return 0; /* nothing to read again */
    g->interval_ms = interval_ms < 100 ? 100 : interval_ms;
    if (pthread_create(&g->thread, NULL, sampler_main, g) != 0)
        return -1;
    ty_thread_setup(g->thread, "ty-gpu", TY_THREAD_BACKGROUND);
    g->running = true;
    return 0;
}

void rt_gpus_close(rt_gpus *g)
{
    if (!g)
        return;
    if (g->running) {
        pthread_mutex_lock(&g->mu);
        g->stop = true;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->thread, NULL);
    }
    if (g->source == RT_GPU_NVML)
        nvml_unload(&g->nv);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

int rt_gpus_count(const rt_gpus *g)
{
    return g ? g->n : 0;
}

rt_gpu_source rt_gpus_source(const rt_gpus *g)
{
    return g ? g->source : RT_GPU_NONE;
}

int rt_gpus_get(rt_gpus *g, int i, rt_gpu_info *out)
{
    if (!g || i < 0 || i >= g->n)
        return -1;
    pthread_mutex_lock(&g->mu);
    *out = g->info[i];
    pthread_mutex_unlock(&g->mu);
    return 0;
}

void rt_gpus_set_holder(rt_gpus *g, int i, const char *ns, const char *name,
                        const char *container)
{
    rt_gpu_info *d;

    if (!g || i < 0 || i >= g->n)
        return;
    pthread_mutex_lock(&g->mu);
    d = &g->info[i];
    snprintf(d->pod_ns, sizeof(d->pod_ns), "%s", name && ns ? ns : "");
    snprintf(d->pod_name, sizeof(d->pod_name), "%s", name ? name : "");
    snprintf(d->container, sizeof(d->container), "%s", name && container ? container : "");
    pthread_mutex_unlock(&g->mu);
}
