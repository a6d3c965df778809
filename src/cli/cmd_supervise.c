/* cmd_supervise.c - `trainyard supervise --pod-dir DIR` (hidden): the
 * per-pod supervisor a runtime starts; see runtime/local/supervisor.c. */
#include "cli/cli.h"
#include "runtime/local/runtime.h"

int cmd_supervise(int argc, char **argv)
{
    return rt_supervise_cli(argc, argv, "trainyard supervise");
}
