/* nvml_double.c - a stand-in for libnvidia-ml.so.1 that the tests load in
 * its place (TRAINYARD_NVML_LIB): the same entry points, with devices and
 * readings taken from the file NVML_DOUBLE_CONFIG names. The file is read
 * again on every call, so a test changes the readings by rewriting it
 * (atomically: write a temporary file, then rename).
 *
 *   init fail                 nvmlInit_v2 fails (default: succeeds)
 *   count fail                nvmlDeviceGetCount_v2 fails
 *   gpu <i> key=value...      device i (the count is the highest i + 1)
 *
 * keys: uuid, name (underscores read as spaces), minor, util, memutil,
 * total_mib, used_mib, reserved_mib (counted in "used" by
 * nvmlDeviceGetMemoryInfo, not by its _v2), temp, power_mw, ecc_dbe, xid (an XID code) and
 * xidseq (how many XID events there have been: each new one is delivered
 * once through nvmlEventSetWait_v2), fail=<call>[,<call>] with calls
 * handle, uuid, name, util, mem, mem2, temp, power, ecc: those fail for that
 * device (NVML_ERROR_UNKNOWN). Without a file: no devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEV 64
#define OK 0
#define ERR_INVALID_ARGUMENT 2
#define ERR_TIMEOUT 10
#define ERR_UNKNOWN 999

typedef struct dev {
    char uuid[96], name[96], fail[128];
    unsigned minor, util, memutil, temp, power_mw;
    unsigned long long total_mib, used_mib, reserved_mib, ecc_dbe, xid, xidseq;
} dev;

typedef struct { unsigned int gpu, memory; } util_t;
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} mem2_t;
typedef struct {
    void *device;
    unsigned long long type, data;
    unsigned int gpu_instance, compute_instance;
} event_t;

static dev devs[MAX_DEV];
static int ndevs, init_fails, count_fails;
static int registered[MAX_DEV];
static unsigned long long delivered[MAX_DEV];
static int evset_token;

static void set_key(dev *d, const char *k, const char *v)
{
    if (!strcmp(k, "uuid"))
        snprintf(d->uuid, sizeof(d->uuid), "%s", v);
    else if (!strcmp(k, "name")) {
        snprintf(d->name, sizeof(d->name), "%s", v);
        for (char *p = d->name; *p; p++)
            if (*p == '_')
                *p = ' ';
    } else if (!strcmp(k, "fail"))
        snprintf(d->fail, sizeof(d->fail), ",%s,", v);
    else if (!strcmp(k, "minor"))
        d->minor = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "util"))
        d->util = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "memutil"))
        d->memutil = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "temp"))
        d->temp = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "power_mw"))
        d->power_mw = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "total_mib"))
        d->total_mib = strtoull(v, NULL, 10);
    else if (!strcmp(k, "used_mib"))
        d->used_mib = strtoull(v, NULL, 10);
    else if (!strcmp(k, "reserved_mib"))
        d->reserved_mib = strtoull(v, NULL, 10);
    else if (!strcmp(k, "ecc_dbe"))
        d->ecc_dbe = strtoull(v, NULL, 10);
    else if (!strcmp(k, "xid"))
        d->xid = strtoull(v, NULL, 10);
    else if (!strcmp(k, "xidseq"))
        d->xidseq = strtoull(v, NULL, 10);
}

static void load(void)
{
    const char *path = getenv("NVML_DOUBLE_CONFIG");
    char line[1024];
    FILE *f;

    memset(devs, 0, sizeof(devs));
    ndevs = init_fails = count_fails = 0;
    if (!path || !(f = fopen(path, "re")))
        return;
    while (fgets(line, sizeof(line), f)) {
        char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
        int i;

        if (!tok || *tok == '#')
            continue;
        if (!strcmp(tok, "init") || !strcmp(tok, "count")) {
            char *v = strtok_r(NULL, " \t\n", &save);
            if (v && !strcmp(v, "fail"))
                *(!strcmp(tok, "init") ? &init_fails : &count_fails) = 1;
            continue;
        }
        if (strcmp(tok, "gpu") || !(tok = strtok_r(NULL, " \t\n", &save)))
            continue;
        i = atoi(tok);
        if (i < 0 || i >= MAX_DEV)
            continue;
        devs[i].minor = (unsigned)i;
        snprintf(devs[i].uuid, sizeof(devs[i].uuid), "GPU-double-%d", i);
        snprintf(devs[i].name, sizeof(devs[i].name), "NVML double");
        while ((tok = strtok_r(NULL, " \t\n", &save))) {
            char *eq = strchr(tok, '=');
            if (eq) {
                *eq = '\0';
                set_key(&devs[i], tok, eq + 1);
            }
        }
        if (i + 1 > ndevs)
            ndevs = i + 1;
    }
    fclose(f);
}

/* The device behind a handle (a pointer into devs), or NULL. */
static dev *get(void *h, const char *call)
{
    char key[32];
    dev *d = h;

    if (d < devs || d >= devs + MAX_DEV)
        return NULL;
    load();
    if (d - devs >= ndevs)
        return NULL;
    snprintf(key, sizeof(key), ",%s,", call);
    return strstr(d->fail, key) ? NULL : d;
}

int nvmlInit_v2(void)
{
    load();
    return init_fails ? ERR_UNKNOWN : OK;
}

int nvmlShutdown(void)
{
    return OK;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
    load();
    if (count_fails)
        return ERR_UNKNOWN;
    *n = (unsigned)ndevs;
    return OK;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h)
{
    load();
    if (i >= (unsigned)ndevs)
        return ERR_INVALID_ARGUMENT;
    if (strstr(devs[i].fail, ",handle,"))
        return ERR_UNKNOWN;
    *h = &devs[i];
    return OK;
}

int nvmlDeviceGetUUID(void *h, char *buf, unsigned int len)
{
    dev *d = get(h, "uuid");
    if (!d)
        return ERR_UNKNOWN;
    snprintf(buf, len, "%s", d->uuid);
    return OK;
}

int nvmlDeviceGetName(void *h, char *buf, unsigned int len)
{
    dev *d = get(h, "name");
    if (!d)
        return ERR_UNKNOWN;
    snprintf(buf, len, "%s", d->name);
    return OK;
}

int nvmlDeviceGetMinorNumber(void *h, unsigned int *minor)
{
    dev *d = get(h, "minor");
    if (!d)
        return ERR_UNKNOWN;
    *minor = d->minor;
    return OK;
}

int nvmlDeviceGetUtilizationRates(void *h, util_t *u)
{
    dev *d = get(h, "util");
    if (!d)
        return ERR_UNKNOWN;
    u->gpu = d->util;
    u->memory = d->memutil;
    return OK;
}

int nvmlDeviceGetMemoryInfo(void *h, mem_t *m)
{
    dev *d = get(h, "mem");
    if (!d)
        return ERR_UNKNOWN;
    m->total = d->total_mib << 20;
    m->used = (d->used_mib + d->reserved_mib) << 20;
    m->free = m->total > m->used ? m->total - m->used : 0;
    return OK;
}

/* v1 counts the reserved memory as used; v2 apart. */
int nvmlDeviceGetMemoryInfo_v2(void *h, mem2_t *m)
{
    dev *d = get(h, "mem2");
    if (!d || m->version != ((unsigned)sizeof(mem2_t) | (2u << 24)))
        return ERR_UNKNOWN;
    m->total = d->total_mib << 20;
    m->reserved = d->reserved_mib << 20;
    m->used = d->used_mib << 20;
    m->free = m->total > m->used + m->reserved ? m->total - m->used - m->reserved : 0;
    return OK;
}

int nvmlDeviceGetTemperature(void *h, int sensor, unsigned int *t)
{
    dev *d = get(h, "temp");
    if (!d || sensor != 0)
        return ERR_UNKNOWN;
    *t = d->temp;
    return OK;
}

int nvmlDeviceGetPowerUsage(void *h, unsigned int *mw)
{
    dev *d = get(h, "power");
    if (!d)
        return ERR_UNKNOWN;
    *mw = d->power_mw;
    return OK;
}

int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter, unsigned long long *n)
{
    dev *d = get(h, "ecc");
    if (!d || type != 1 || counter != 0)
        return ERR_UNKNOWN;
    *n = d->ecc_dbe;
    return OK;
}

int nvmlEventSetCreate(void **set)
{
    *set = &evset_token;
    return OK;
}

int nvmlEventSetFree(void *set)
{
    (void)set;
    return OK;
}

int nvmlDeviceRegisterEvents(void *h, unsigned long long types, void *set)
{
    dev *d = get(h, "events");
    if (!d || set != &evset_token)
        return ERR_UNKNOWN;
    if (types & 0x8ull) {
        registered[d - devs] = 1;
        delivered[d - devs] = d->xidseq; /* events before registration are not seen */
    }
    return OK;
}

int nvmlEventSetWait_v2(void *set, event_t *ev, unsigned int timeout_ms)
{
    (void)timeout_ms;
    if (set != &evset_token)
        return ERR_INVALID_ARGUMENT;
    load();
    for (int i = 0; i < ndevs; i++) {
        if (registered[i] && devs[i].xidseq > delivered[i]) {
            delivered[i]++;
            memset(ev, 0, sizeof(*ev));
            ev->device = &devs[i];
            ev->type = 0x8ull;
            ev->data = devs[i].xid;
            return OK;
        }
    }
    return ERR_TIMEOUT;
}
