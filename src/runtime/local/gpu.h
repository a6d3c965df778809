/* gpu.h - this machine's GPUs: found and read through NVML, or made up.
 *
 * NVML (libnvidia-ml.so.1) is loaded at run time, so the binary needs no
 * NVIDIA package; TRAINYARD_NVML_LIB names another library to load in its
 * place (the tests' double, tests/nvml_double). Without NVML, `nvidia-smi -L`
 * still gives the devices' names and UUIDs (no readings); without either,
 * there are none. Fake GPUs (`--fake-gpus N`) report synthetic readings, and
 * say so: their model is RT_GPU_FAKE_MODEL, their UUIDs start "GPU-fake-".
 *
 * A sampler thread reads every device every few seconds; readers get a copy
 * of the last sample. Which pod holds which GPU is told by the agent and
 * travels with the readings (the /metrics labels). Thread-safe. */
#ifndef TY_RUNTIME_LOCAL_GPU_H
#define TY_RUNTIME_LOCAL_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define RT_GPU_MAX 64
#define RT_GPU_FAKE_MODEL "Trainyard fake GPU"
#define RT_GPU_NVML_ENV "TRAINYARD_NVML_LIB"

typedef struct rt_gpus rt_gpus;

typedef enum { RT_GPU_NONE, RT_GPU_NVML, RT_GPU_SMI, RT_GPU_FAKE } rt_gpu_source;

/* Which readings the last sample got (a device call can fail alone). */
enum {
    RT_GPU_HAS_UTIL = 1 << 0,   /* util_pct, mem_util_pct */
    RT_GPU_HAS_MEM = 1 << 1,    /* fb_used_mib, fb_free_mib, fb_total_mib */
    RT_GPU_HAS_TEMP = 1 << 2,
    RT_GPU_HAS_POWER = 1 << 3,
    RT_GPU_HAS_ECC = 1 << 4,    /* ecc_dbe_volatile */
    RT_GPU_HAS_XID = 1 << 5,    /* XID events are being watched */
};

typedef struct rt_gpu_info {
    int index;
    unsigned minor;             /* /dev/nvidia<minor> */
    char uuid[96], model[96];
    unsigned has;               /* RT_GPU_HAS_* */
    unsigned util_pct, mem_util_pct;
    unsigned long long fb_used_mib, fb_free_mib, fb_total_mib;
    unsigned temp_c;
    double power_w;
    unsigned long long ecc_dbe_volatile;
    unsigned long long xid_count; /* XID critical errors seen since start */
    unsigned last_xid;          /* the last one's code, 0 = none */
    unsigned bad_xid;           /* the last that is the GPU's fault, not a program's */
    /* The pod holding it, "" when none. */
    char pod_ns[256], pod_name[256], container[256];
} rt_gpu_info;

/* Finds the GPUs: fake >= 0 makes exactly that many fake ones; fake < 0
 * detects them (NVML, then nvidia-smi, else none). Takes a first sample.
 * Never fails but for memory (NULL). Caller closes. */
rt_gpus *rt_gpus_open(int fake);
/* Starts the sampler thread (every interval_ms, at least 100). 0 / -1. */
int rt_gpus_start(rt_gpus *g, int interval_ms);
/* Stops the thread, unloads NVML, frees. NULL is fine. */
void rt_gpus_close(rt_gpus *g);

int rt_gpus_count(const rt_gpus *g);
rt_gpu_source rt_gpus_source(const rt_gpus *g);
/* Reads every device now (the sampler does this on its own). */
void rt_gpus_sample(rt_gpus *g);
/* A copy of GPU i's last sample. 0, or -1 when there is no GPU i. */
int rt_gpus_get(rt_gpus *g, int i, rt_gpu_info *out);
/* GPU i is now held by the pod ns/name (its container), or by none when
 * name is NULL. Strings are copied (truncated to fit). */
void rt_gpus_set_holder(rt_gpus *g, int i, const char *ns, const char *name,
                        const char *container);

/* false once the GPU reported an XID error that is not a program's fault
 * (13, 31, 43, 45, 68 and 109 are) or double-bit ECC errors: it stays so
 * until the server restarts, as NVIDIA's device plugin keeps it. *why
 * (may be NULL) says what, in a sentence fragment. */
bool rt_gpu_healthy(const rt_gpu_info *d, char *why, size_t len);

/* Appends the DCGM exporter's series for every GPU (Prometheus text:
 * DCGM_FI_DEV_GPU_UTIL, ...; labels gpu, UUID, device, modelName, Hostname,
 * container, namespace, pod). hostname is borrowed. */
void rt_gpus_render(rt_gpus *g, const char *hostname, ty_buf *out);

/* The readings as annotations (agent_gpu_report.c): on the Node, on each
 * pod holding GPUs and, summed up, on the pod's job (docs/internals). */
#define RT_GPU_REPORT_ANNOTATION "trainyard.io/gpu-utilization"
#define RT_GPU_REPORT_MS 5000

/* A job's summary, added up from its pods' annotations. */
typedef struct rt_gpu_job_summary {
    long long gpus, pods, util_sum, util_n, mem_used, mem_total;
    bool fake;
} rt_gpu_job_summary;
/* Adds one pod's annotation text (NULL or not JSON: nothing). */
void rt_gpu_job_summary_add(rt_gpu_job_summary *s, const char *pod_report);
/* The job's annotation text: compact JSON, sorted keys. Caller frees. */
char *rt_gpu_job_summary_text(const rt_gpu_job_summary *s);

#endif
