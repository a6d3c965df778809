/* test_gpu.c - the GPU reader (runtime/local/gpu.c) against the NVML double
 * (tests/nvml_double), loaded in NVML's place through TRAINYARD_NVML_LIB:
 * devices found and read, a failing device call or init, a missing
 * library, readings and XID events that change over time, fake GPUs and
 * the DCGM series on /metrics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/local/gpu.h"

static char lib[PATH_MAX], conf[64] = "/tmp/ty-gpu-conf.XXXXXX";

/* The double sits beside this test in the build directory. */
static int group_setup(void **state)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int fd;

    (void)state;
    if (n < 0)
        return -1;
    self[n] = '\0';
    snprintf(lib, sizeof(lib), "%s/libnvml_double.so", dirname(self));
    if ((fd = mkstemp(conf)) < 0)
        return -1;
    close(fd);
    setenv(RT_GPU_NVML_ENV, lib, 1);
    setenv("NVML_DOUBLE_CONFIG", conf, 1);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    unlink(conf);
    return 0;
}

static void write_conf(const char *text)
{
    char tmp[96];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", conf);
    assert_non_null(f = fopen(tmp, "w"));
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, conf), 0);
}

static const char two_gpus[] =
    "gpu 0 uuid=GPU-aaaa name=NVIDIA_H100_80GB_HBM3 util=37 memutil=12 total_mib=81559 "
    "used_mib=1024 temp=41 power_mw=123456 ecc_dbe=2\n"
    "gpu 1 uuid=GPU-bbbb minor=3 util=0 total_mib=1000 used_mib=0 temp=30 power_mw=50000\n";

static void test_devices_found_and_read(void **state)
{
    rt_gpu_info d;
    rt_gpus *g;

    (void)state;
    write_conf(two_gpus);
    assert_non_null(g = rt_gpus_open(-1));
    assert_int_equal(rt_gpus_source(g), RT_GPU_NVML);
    assert_int_equal(rt_gpus_count(g), 2);
    assert_int_equal(rt_gpus_get(g, 0, &d), 0);
    assert_string_equal(d.uuid, "GPU-aaaa");
    assert_string_equal(d.model, "NVIDIA H100 80GB HBM3");
    assert_int_equal(d.util_pct, 37);
    assert_int_equal(d.mem_util_pct, 12);
    assert_int_equal(d.fb_total_mib, 81559);
    assert_int_equal(d.fb_used_mib, 1024);
    assert_int_equal(d.fb_free_mib, 81559 - 1024);
    assert_int_equal(d.temp_c, 41);
    assert_true(d.power_w > 123.455 && d.power_w < 123.457);
    assert_int_equal(d.ecc_dbe_volatile, 2);
    assert_int_equal(d.has & RT_GPU_HAS_XID, RT_GPU_HAS_XID);
    assert_int_equal(rt_gpus_get(g, 1, &d), 0);
    assert_int_equal(d.minor, 3);
    assert_int_equal(rt_gpus_get(g, 2, &d), -1);
    rt_gpus_close(g);
}

/* Memory through nvmlDeviceGetMemoryInfo_v2 (the reserved memory not
 * "used", as nvidia-smi shows it), else the v1 call. */
static void test_memory_v2_then_v1(void **state)
{
    rt_gpu_info d;
    rt_gpus *g;

    (void)state;
    write_conf("gpu 0 total_mib=1000 used_mib=100 reserved_mib=50\n"
               "gpu 1 total_mib=1000 used_mib=100 reserved_mib=50 fail=mem2\n");
    assert_non_null(g = rt_gpus_open(-1));
    assert_int_equal(rt_gpus_get(g, 0, &d), 0);
    assert_int_equal(d.fb_used_mib, 100);
    assert_int_equal(d.fb_free_mib, 850);
    assert_int_equal(rt_gpus_get(g, 1, &d), 0);
    assert_int_equal(d.fb_used_mib, 150);
    assert_int_equal(d.fb_free_mib, 850);
    rt_gpus_close(g);
}

static void test_readings_change(void **state)
{
    rt_gpu_info d;
    rt_gpus *g;

    (void)state;
    write_conf(two_gpus);
    assert_non_null(g = rt_gpus_open(-1));
    write_conf("gpu 0 uuid=GPU-aaaa util=90 temp=77 xid=79 xidseq=1\ngpu 1\n");
    rt_gpus_sample(g);
    assert_int_equal(rt_gpus_get(g, 0, &d), 0);
    assert_int_equal(d.util_pct, 90);
    assert_int_equal(d.temp_c, 77);
    assert_int_equal(d.xid_count, 1);
    assert_int_equal(d.last_xid, 79);
    /* Two more on GPU 1 the next time round; GPU 0's stays counted once. */
    write_conf("gpu 0 uuid=GPU-aaaa xid=79 xidseq=1\ngpu 1 xid=48 xidseq=2\n");
    rt_gpus_sample(g);
    assert_int_equal(rt_gpus_get(g, 0, &d), 0);
    assert_int_equal(d.xid_count, 1);
    assert_int_equal(rt_gpus_get(g, 1, &d), 0);
    assert_int_equal(d.xid_count, 2);
    assert_int_equal(d.last_xid, 48);
    rt_gpus_close(g);
}

static void test_health(void **state)
{
    char why[64];
    rt_gpu_info d;
    rt_gpus *g;

    (void)state;
    write_conf("gpu 0 ecc_dbe=0\ngpu 1 ecc_dbe=0\ngpu 2 ecc_dbe=3\n");
    assert_non_null(g = rt_gpus_open(-1));
    /* A program's fault (XID 13: graphics engine exception) leaves the GPU
     * in service; XID 79 (fallen off the bus) does not. */
    write_conf("gpu 0 xid=13 xidseq=1\ngpu 1 xid=79 xidseq=1\ngpu 2 ecc_dbe=3\n");
    rt_gpus_sample(g);
    assert_int_equal(rt_gpus_get(g, 0, &d), 0);
    assert_int_equal(d.last_xid, 13);
    assert_true(rt_gpu_healthy(&d, why, sizeof(why)));
    assert_string_equal(why, "");
    assert_int_equal(rt_gpus_get(g, 1, &d), 0);
    assert_false(rt_gpu_healthy(&d, why, sizeof(why)));
    assert_string_equal(why, "XID 79");
    /* ... and stays out after a later program fault. */
    write_conf("gpu 0\ngpu 1 xid=13 xidseq=2\ngpu 2 ecc_dbe=3\n");
    rt_gpus_sample(g);
    assert_int_equal(rt_gpus_get(g, 1, &d), 0);
    assert_int_equal(d.last_xid, 13);
    assert_false(rt_gpu_healthy(&d, NULL, 0));
    assert_int_equal(rt_gpus_get(g, 2, &d), 0);
    assert_false(rt_gpu_healthy(&d, why, sizeof(why)));
    assert_string_equal(why, "3 double-bit ECC errors");
    rt_gpus_close(g);
}

static void test_sampler_thread(void **state)
{
    rt_gpu_info d = {0};
    rt_gpus *g;

    (void)state;
    write_conf(two_gpus);
    assert_non_null(g = rt_gpus_open(-1));
    assert_int_equal(rt_gpus_start(g, 100), 0);
    write_conf("gpu 0 util=55\ngpu 1\n");
    /* The thread reads every 100 ms; a loaded machine gets a minute. */
    for (int i = 0; i < 6000; i++) {
        assert_int_equal(rt_gpus_get(g, 0, &d), 0);
        if (d.util_pct == 55)
            break;
        usleep(10000);
    }
    assert_int_equal(d.util_pct, 55);
    rt_gpus_close(g);
}

static void test_device_call_fails(void **state)
{
    rt_gpu_info d;
    rt_gpus *g;

    (void)state;
    write_conf("gpu 0 util=5 temp=40 fail=temp,power\ngpu 1 fail=handle\n");
    assert_non_null(g = rt_gpus_open(-1));
    assert_int_equal(rt_gpus_count(g), 2);
    assert_int_equal(rt_gpus_get(g, 0, &d), 0);
    assert_true(d.has & RT_GPU_HAS_UTIL);
    assert_true(d.has & RT_GPU_HAS_MEM);
    assert_false(d.has & RT_GPU_HAS_TEMP);
    assert_false(d.has & RT_GPU_HAS_POWER);
    /* A device that cannot be opened still counts, with no readings. */
    assert_int_equal(rt_gpus_get(g, 1, &d), 0);
    assert_int_equal(d.has, 0);
    assert_string_equal(d.model, "unknown");
    rt_gpus_close(g);
}

/* Without NVML the reader falls back to nvidia-smi, which a machine
 * without GPUs lacks too: then there are none. */
static void assert_no_nvml(rt_gpus *g)
{
    assert_int_not_equal(rt_gpus_source(g), RT_GPU_NVML);
    if (rt_gpus_source(g) == RT_GPU_NONE)
        assert_int_equal(rt_gpus_count(g), 0);
}

static void test_init_fails(void **state)
{
    rt_gpus *g;

    (void)state;
    write_conf("init fail\ngpu 0\ngpu 1\n");
    assert_non_null(g = rt_gpus_open(-1));
    assert_no_nvml(g);
    rt_gpus_close(g);
    write_conf("count fail\ngpu 0\n");
    assert_non_null(g = rt_gpus_open(-1));
    assert_no_nvml(g);
    rt_gpus_close(g);
}

static void test_library_absent(void **state)
{
    rt_gpus *g;

    (void)state;
    write_conf(two_gpus);
    setenv(RT_GPU_NVML_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
    g = rt_gpus_open(-1);
    setenv(RT_GPU_NVML_ENV, lib, 1);
    assert_non_null(g);
    assert_no_nvml(g);
    rt_gpus_close(g);
}

static void test_fake(void **state)
{
    rt_gpu_info d;
    rt_gpus *g;

    (void)state;
    assert_non_null(g = rt_gpus_open(3));
    assert_int_equal(rt_gpus_source(g), RT_GPU_FAKE);
    assert_int_equal(rt_gpus_count(g), 3);
    assert_int_equal(rt_gpus_get(g, 2, &d), 0);
    assert_string_equal(d.model, RT_GPU_FAKE_MODEL);
    assert_int_equal(strncmp(d.uuid, "GPU-fake-", 9), 0);
    assert_int_equal(d.util_pct, 0);
    rt_gpus_set_holder(g, 2, "ns", "p", "c");
    rt_gpus_sample(g);
    assert_int_equal(rt_gpus_get(g, 2, &d), 0);
    assert_int_equal(d.util_pct, 100);
    assert_string_equal(d.pod_name, "p");
    rt_gpus_set_holder(g, 2, NULL, NULL, NULL);
    rt_gpus_sample(g);
    assert_int_equal(rt_gpus_get(g, 2, &d), 0);
    assert_int_equal(d.util_pct, 0);
    assert_string_equal(d.pod_name, "");
    rt_gpus_close(g);
    assert_non_null(g = rt_gpus_open(0));
    assert_int_equal(rt_gpus_count(g), 0);
    rt_gpus_close(g);
}

static void test_render_dcgm(void **state)
{
    ty_buf b = {0};
    rt_gpus *g;

    (void)state;
    write_conf(two_gpus);
    assert_non_null(g = rt_gpus_open(-1));
    rt_gpus_set_holder(g, 0, "team-a", "train-0", "worker\"x");
    rt_gpus_render(g, "node1", &b);
    ty_buf_puts(&b, "");
    assert_non_null(strstr(b.data, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"));
    assert_non_null(strstr(
        b.data, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-aaaa\",device=\"nvidia0\","
                "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node1\",container=\"worker\\\"x\","
                "namespace=\"team-a\",pod=\"train-0\"} 37\n"));
    assert_non_null(strstr(b.data, "DCGM_FI_DEV_FB_USED{gpu=\"0\","));
    assert_non_null(strstr(b.data, "pod=\"train-0\"} 1024\n"));
    assert_non_null(strstr(b.data, "DCGM_FI_DEV_FB_FREE{gpu=\"1\",UUID=\"GPU-bbbb\",device=\"nvidia3\""));
    assert_non_null(strstr(b.data, "pod=\"\"} 1000\n"));
    assert_non_null(strstr(b.data, "pod=\"train-0\"} 123.456\n"));
    assert_non_null(strstr(b.data, "# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter\n"));
    assert_non_null(strstr(b.data, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\""));
    ty_buf_free(&b);
    rt_gpus_close(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices_found_and_read),
        cmocka_unit_test(test_memory_v2_then_v1),
        cmocka_unit_test(test_readings_change),
        cmocka_unit_test(test_health),
        cmocka_unit_test(test_sampler_thread),
        cmocka_unit_test(test_device_call_fails),
        cmocka_unit_test(test_init_fails),
        cmocka_unit_test(test_library_absent),
        cmocka_unit_test(test_fake),
        cmocka_unit_test(test_render_dcgm),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
