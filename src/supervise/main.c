/* main.c - `trainyard-supervise --pod-dir DIR`: the per-pod supervisor as a
 * program of its own. The local runtime starts one per pod, so it links only
 * libc and jansson: loading the server's thirty-odd libraries was most of a
 * pod's start-up time. `trainyard supervise` runs the same code. */
#include "runtime/local/runtime.h"

int main(int argc, char **argv)
{
    return rt_supervise_cli(argc, argv, "trainyard-supervise");
}
