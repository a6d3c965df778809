/* mpi_agent.h - the rsh agent mpirun reaches the other pods of an MPI job
 * with (kubexec.sh), written by the MPI controllers (Kubeflow MPIJob v1 and
 * v2beta1, Volcano's mpi plugin) into the job's ConfigMap at
 * MPI_AGENT_PATH.
 *
 * What the agent does depends on what runs the pods, so it is the runtime
 * backend's (runtime/backend.h, ops->mpi_agent): the backend started by
 * `trainyard server` registers its own here, and the controllers, which may
 * not include the runtime (a lower layer; docs/layout.md), read it. The
 * one-machine agent below is the default: every pod of the local runtime and
 * of the simulated nodes shares this machine, so it runs the command here,
 * as the target pod. */
#ifndef TY_API_MPI_AGENT_H
#define TY_API_MPI_AGENT_H

#define MPI_AGENT_DIR "/etc/mpi"
#define MPI_AGENT_FILE "kubexec.sh"
#define MPI_AGENT_PATH MPI_AGENT_DIR "/" MPI_AGENT_FILE

/* The shell lines every agent starts with: ssh's options (what
 * *_RSH_ARGS / *_EXTRA_ARGS hand it) skipped, so that $1 is the host. */
#define MPI_AGENT_SKIP_SSH_OPTIONS                                                           \
    "while [ $# -gt 1 ]; do\n"                                                              \
    "    case $1 in\n"                                                                      \
    "    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;\n"                                             \
    "    -*) shift ;;\n"                                                                    \
    "    *) break ;;\n"                                                                     \
    "    esac\n"                                                                            \
    "done\n"

/* The one-machine agent: `kubexec.sh [ssh options] <host> <command...>`.
 * The options (what *_RSH_ARGS / *_EXTRA_ARGS hand ssh) are skipped; host
 * may be qualified (`<pod>.<job>`, `<pod>.<job>.<ns>.svc`): its first label
 * is the pod. The command runs under /bin/sh with the target pod's name as
 * HOSTNAME and TRAINYARD_TARGET_POD (and, as root, as its host name in a UTS
 * namespace of its own: MPI daemons tell nodes apart by host name), without
 * the pod-address bind shim (TY_POD_IP unset: Open MPI's daemons pick their
 * ports on every interface), and with K_MPI_JOB_ROLE=worker when the
 * launcher has a role (mpi-operator v2's launcher). */
extern const char mpi_agent_one_machine[];

/* The agent the controllers write: the registered one, else the
 * one-machine agent. Borrowed, static. */
const char *mpi_agent_script(void);

/* Makes script (static text that outlives every caller; NULL = back to the
 * default) the agent. Called by rt_backend_start before controllers make
 * MPI jobs' ConfigMaps. */
void mpi_agent_register(const char *script);

#endif
