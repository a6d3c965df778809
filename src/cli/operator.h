/* operator.h - `trainyard operator`'s parts (cmd_operator.c): the job
 * controllers and the gang scheduler against a Kubernetes API server
 * (docs/kubernetes.md). */
#ifndef TY_CLI_OPERATOR_H
#define TY_CLI_OPERATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "client/kc.h"
#include "server/webhook.h"

/* ---- --enable-scheme ---- */

/* The schemes named in list (comma-separated, as training-operator's
 * --enable-scheme: tfjob, pytorchjob, mpijob, xgboostjob, paddlejob, jaxjob,
 * mxjob, msjob; volcano for Volcano's Job, CronJob and JobFlow; trainjob
 * for Kubeflow Trainer v2's TrainJob) added to *kinds (bit i:
 * api/kubeflow.h's kf_kinds()[i]; a kind served in two versions or groups
 * is both), *volcano and *trainer; case does not matter, blanks around a
 * name are dropped. -1 with err naming the unknown (or empty) scheme and
 * the known ones, *kinds, *volcano and *trainer untouched. In
 * operator_schemes.c, which the ty_cli library holds for the unit tests. */
int op_schemes_add(const char *list, uint64_t *kinds, bool *volcano, bool *trainer,
                   ty_error *err);
/* Every scheme. */
void op_schemes_all(uint64_t *kinds, bool *volcano, bool *trainer);

/* ---- the probe and metrics listener (operator_probe.c) ---- */

typedef struct op_probe op_probe;

/* Serves GET /healthz, /readyz and /metrics over plain HTTP on address
 * (IPv4) and port (0 = a free one). Starts healthy and not ready. */
op_probe *op_probe_start(const char *address, uint16_t port, ty_error *err);
uint16_t op_probe_port(const op_probe *p);
void op_probe_set(op_probe *p, bool healthy, bool ready);
void op_probe_stop(op_probe *p); /* NULL is fine */

/* ---- the TrainJob progress endpoint (op_progress.c) ---- */

/* Turns it on: the TrainJob controller gives pods url (https://HOST[:PORT],
 * the webhook listener as they reach it) and the CA of ca_file (NULL:
 * none, the pods' own trust), tokens derived from the SHA-256 of key_file
 * (at least 32 bytes); *out is what the webhook listener serves it with
 * (webhook_serve_opts.extra), reading and writing through kc. 0, or -1
 * with err (a bad URL, a file that does not read). */
int op_progress_setup(ty_kc *kc, const char *url, const char *ca_file, const char *key_file,
                      const webhook_extra **out, ty_error *err);

#endif
