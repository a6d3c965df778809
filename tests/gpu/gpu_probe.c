/* gpu_probe.c - reads this machine's GPUs the way the server does
 * (runtime/local/gpu.c) and prints what it found, the DCGM series and how
 * long a round of readings takes: the check on a real GPU (tests/gpu/run.sh).
 * usage: gpu_probe [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtime/local/gpu.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    static const char *const sources[] = {"none", "nvml", "nvidia-smi", "fake"};
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    double t0 = now_ms(), worst = 0, total = 0;
    rt_gpus *g = rt_gpus_open(-1);
    ty_buf b = {0};
    rt_gpu_info d;

    if (!g)
        return 1;
    printf("open: %.1f ms, source %s, %d GPU(s)\n", now_ms() - t0, sources[rt_gpus_source(g)],
           rt_gpus_count(g));
    for (int r = 0; r < rounds; r++) {
        double t = now_ms(), dt;
        rt_gpus_sample(g);
        dt = now_ms() - t;
        total += dt;
        worst = dt > worst ? dt : worst;
        for (int i = 0; i < rt_gpus_count(g); i++) {
            char why[64];
            rt_gpus_get(g, i, &d);
            printf("round %d gpu %d %s \"%s\" minor %u has 0x%x util %u%% mem %u%% fb %llu/%llu "
                   "MiB (free %llu) temp %u C power %.3f W dbe %llu xids %llu last %u "
                   "healthy %d %s\n",
                   r, i, d.uuid, d.model, d.minor, d.has, d.util_pct, d.mem_util_pct,
                   d.fb_used_mib, d.fb_total_mib, d.fb_free_mib, d.temp_c, d.power_w,
                   d.ecc_dbe_volatile, d.xid_count, d.last_xid,
                   rt_gpu_healthy(&d, why, sizeof(why)), why);
        }
        if (r + 1 < rounds)
            usleep(500000);
    }
    printf("sample: mean %.2f ms, worst %.2f ms over %d round(s)\n",
           rounds ? total / rounds : 0, worst, rounds);
    rt_gpus_set_holder(g, 0, "default", "probe", "main");
    rt_gpus_render(g, "probe-host", &b);
    printf("%s", b.data ? b.data : "(no series)\n");
    ty_buf_free(&b);
    t0 = now_ms();
    rt_gpus_close(g);
    printf("close: %.1f ms\n", now_ms() - t0);
    return 0;
}
