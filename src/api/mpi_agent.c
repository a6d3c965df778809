/* mpi_agent.c - the MPI rsh agent (see mpi_agent.h). */
#include <stdatomic.h>
#include <stddef.h>

#include "api/mpi_agent.h"

const char mpi_agent_one_machine[] =
    "#!/bin/sh\n"
    "# rsh agent for mpirun: kubexec.sh [ssh options] <host> <command...>\n"
    "# All pods of this job share this machine: run the command here, as the\n"
    "# target pod (its name and its hostname).\n"
    MPI_AGENT_SKIP_SSH_OPTIONS
    "POD_NAME=${1%%.*}\n"
    "shift\n"
    "# Open MPI's TCP transports pick free ports themselves and advertise every\n"
    "# interface, so its daemons and ranks run without the pod-address bind shim.\n"
    "unset TY_POD_IP\n"
    "HOSTNAME=$POD_NAME\n"
    "TRAINYARD_TARGET_POD=$POD_NAME\n"
    "export HOSTNAME TRAINYARD_TARGET_POD\n"
    "# A launcher with a role (mpi-operator v2) starts workers.\n"
    "if [ -n \"${K_MPI_JOB_ROLE+set}\" ]; then\n"
    "    K_MPI_JOB_ROLE=worker\n"
    "    export K_MPI_JOB_ROLE\n"
    "fi\n"
    "# MPI daemons tell nodes apart by host name: give the command the pod's own,\n"
    "# in a UTS namespace of its own. A privileged root makes one directly. Any\n"
    "# other uid (pods run as their users) makes a user namespace where it is\n"
    "# root just long enough to set the name, and a second one that maps it\n"
    "# back, so that the command runs as the pod's own uid, without privileges.\n"
    "if command -v unshare >/dev/null 2>&1; then\n"
    "    if unshare --uts true 2>/dev/null; then\n"
    "        exec unshare --uts /bin/sh -c 'hostname \"$0\" && exec /bin/sh -c \"$1\"' \"$POD_NAME\" \"$*\"\n"
    "    fi\n"
    "    U=$(id -u) G=$(id -g)\n"
    "    B=\"unshare --user --map-user=$U --map-group=$G\"\n"
    "    if unshare --user --map-root-user --uts $B true 2>/dev/null; then\n"
    "        exec unshare --user --map-root-user --uts /bin/sh -c 'hostname \"$0\" && exec '\"$B\"' /bin/sh -c \"$1\"' \"$POD_NAME\" \"$*\"\n"
    "    fi\n"
    "fi\n"
    "exec /bin/sh -c \"$*\"\n";

static _Atomic(const char *) registered;

const char *mpi_agent_script(void)
{
    const char *s = atomic_load(&registered);
    return s ? s : mpi_agent_one_machine;
}

void mpi_agent_register(const char *script)
{
    atomic_store(&registered, script);
}
