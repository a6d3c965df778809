/* gpu_metrics.c - the GPUs' readings as the DCGM exporter names them, so
 * that dashboards and alerts written for it work unchanged (gpu.h). */
#include <stddef.h>
#include <stdio.h>

#include "runtime/local/gpu.h"

typedef enum { V_UTIL, V_MEM_UTIL, V_FB_FREE, V_FB_USED, V_TEMP, V_POWER, V_XID, V_ECC_DBE } value_of;

static const struct {
    const char *name, *type, *help;
    unsigned has;
    value_of v;
} dcgm[] = {
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", RT_GPU_HAS_UTIL, V_UTIL},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory copy utilization (in %).", RT_GPU_HAS_UTIL,
     V_MEM_UTIL},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", RT_GPU_HAS_MEM,
     V_FB_FREE},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", RT_GPU_HAS_MEM,
     V_FB_USED},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", RT_GPU_HAS_TEMP, V_TEMP},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", RT_GPU_HAS_POWER, V_POWER},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Code of the last XID error seen (0 = none).",
     RT_GPU_HAS_XID, V_XID},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
     "Double-bit (uncorrectable) ECC errors since the driver was loaded.", RT_GPU_HAS_ECC,
     V_ECC_DBE},
};

static double value(const rt_gpu_info *d, value_of v)
{
    switch (v) {
    case V_UTIL: return d->util_pct;
    case V_MEM_UTIL: return d->mem_util_pct;
    case V_FB_FREE: return (double)d->fb_free_mib;
    case V_FB_USED: return (double)d->fb_used_mib;
    case V_TEMP: return d->temp_c;
    case V_POWER: return d->power_w;
    case V_XID: return d->last_xid;
    case V_ECC_DBE: return (double)d->ecc_dbe_volatile;
    }
    return 0;
}

/* A label value in the exposition format: \, " and newline escaped. */
static void put_label(ty_buf *out, const char *name, const char *v, bool comma)
{
    ty_buf_printf(out, "%s%s=\"", comma ? "," : "", name);
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            ty_buf_printf(out, "\\%c", *v);
        else if (*v == '\n')
            ty_buf_puts(out, "\\n");
        else
            ty_buf_append(out, v, 1);
    }
    ty_buf_puts(out, "\"");
}

static void put_labels(ty_buf *out, const rt_gpu_info *d, const char *host)
{
    char idx[16], dev[32];

    snprintf(idx, sizeof(idx), "%d", d->index);
    snprintf(dev, sizeof(dev), "nvidia%u", d->minor);
    ty_buf_puts(out, "{");
    put_label(out, "gpu", idx, false);
    put_label(out, "UUID", d->uuid, true);
    put_label(out, "device", dev, true);
    put_label(out, "modelName", d->model, true);
    put_label(out, "Hostname", host ? host : "", true);
    put_label(out, "container", d->container, true);
    put_label(out, "namespace", d->pod_ns, true);
    put_label(out, "pod", d->pod_name, true);
    ty_buf_puts(out, "}");
}

void rt_gpus_render(rt_gpus *g, const char *hostname, ty_buf *out)
{
    int n = rt_gpus_count(g);
    rt_gpu_info d;

    if (n == 0)
        return;
    for (size_t m = 0; m < sizeof(dcgm) / sizeof(dcgm[0]); m++) {
        bool head = false;
        for (int i = 0; i < n; i++) {
            if (rt_gpus_get(g, i, &d) < 0 || !(d.has & dcgm[m].has))
                continue;
            if (!head)
                ty_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", dcgm[m].name, dcgm[m].help,
                              dcgm[m].name, dcgm[m].type);
            head = true;
            ty_buf_puts(out, dcgm[m].name);
            put_labels(out, &d, hostname);
            /* 15 digits: 79.408 W, not 79.408000000000001 */
            ty_buf_printf(out, " %.15g\n", value(&d, dcgm[m].v));
        }
    }
}
