/* main.c - `trainyard-supervise --pod-dir DIR`: the per-pod supervisor as a
 * program of its own. The local runtime starts one per pod, so it links only
 * libc and jansson: loading the server's thirty-odd libraries was most of a
 * pod's start-up time. `trainyard supervise` runs the same code. */
#include <stdio.h>
#include <string.h>

#include "runtime/local/runtime.h"

int main(int argc, char **argv)
{
    const char *dir = NULL;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pod-dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strncmp(argv[i], "--pod-dir=", 10))
            dir = argv[i] + 10;
    }
    if (!dir || !*dir) {
        fprintf(stderr, "usage: trainyard-supervise --pod-dir DIR\n"
                        "(started by the server's local runtime, one per pod)\n");
        return 2;
    }
    return rt_supervise_main(dir);
}
