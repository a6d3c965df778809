/* cmd_supervise.c - `trainyard supervise --pod-dir DIR` (hidden): the
 * per-pod supervisor the local runtime starts; see runtime/local/supervisor.c. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "runtime/local/runtime.h"

int cmd_supervise(int argc, char **argv)
{
    const char *dir = NULL;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pod-dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strncmp(argv[i], "--pod-dir=", 10))
            dir = argv[i] + 10;
    }
    if (!dir || !*dir) {
        fprintf(stderr, "usage: trainyard supervise --pod-dir DIR\n"
                        "(started by the server's local runtime, one per pod)\n");
        return 2;
    }
    return rt_supervise_main(dir);
}
