/* trainer_progress.h - the pod side of a TrainJob's progress endpoint
 * (Kubeflow Trainer, KEP-2779; the endpoint is server/progress.h).
 *
 * Each TrainJob gets a Secret `<job>-progress-token` (label
 * trainer.kubeflow.org/trainjob-name=<job>, controlled by the TrainJob, so
 * the garbage collector takes it with the job) holding a random token
 * (data key `token`) and, when the server speaks TLS, the server's CA
 * (`ca.crt`). Every container of the job's pods mounts it read-only at
 * TRAINER_PROGRESS_DIR and gets:
 *   KUBEFLOW_TRAINER_SERVER_URL      this job's endpoint, a full URL
 *   KUBEFLOW_TRAINER_SERVER_TOKEN    TRAINER_PROGRESS_DIR/token
 *   KUBEFLOW_TRAINER_SERVER_CA_CERT  TRAINER_PROGRESS_DIR/ca.crt (TLS only)
 * The token is good for one thing: that job's status.trainerStatus. It is
 * no user of the API (the authenticator never sees it).
 *
 * What the TrainJob controller does with these, in each pass that makes
 * pods (on the first pass of a job before any pod exists):
 *   1. trainer_progress_ensure_secret(c, cfg, job, err) once per pass;
 *      on -1, make no pods this pass: report err (a Warning Event, or the
 *      pass's retry) and come back later. A Secret of that name that the
 *      job does not control (a user's) is never taken over: TY_EEXISTS.
 *   2. trainer_progress_inject(cfg, job, template) on every pod template
 *      (the JobSet's replicated jobs' pod templates, initializers
 *      included) before the pods are built from it.
 * cfg comes from the server's start (its URL as pods reach it, see
 * trainer_progress_pod_url, and its CA: DATA_DIR/pki/ca.crt for the pair
 * the server made itself; with --tls-cert-file the CA that signed it,
 * which the server does not know: a flag to add); with cfg NULL or
 * cfg->server_url NULL the endpoint is off and both calls do nothing.
 * With --port 0 the port is known only once the server listens, and
 * cmd_server.c starts the controllers before: the TrainJob controller
 * needs its cfg before its first pass that makes pods. */
#ifndef TY_CONTROLLER_TRAINER_PROGRESS_H
#define TY_CONTROLLER_TRAINER_PROGRESS_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "client/kc.h"

#define TRAINER_PROGRESS_DIR "/var/run/secrets/trainer.kubeflow.org"
#define TRAINER_PROGRESS_VOLUME "kubeflow-trainer-progress"
#define TRAINER_PROGRESS_SUFFIX "-progress-token"
#define TRAINER_JOB_NAME_LABEL "trainer.kubeflow.org/trainjob-name"

typedef struct trainer_progress_cfg {
    /* The API server as the job's pods reach it: scheme, host, port, no
     * path ("https://127.0.0.1:6443"; pods of the local runtime share the
     * host's network, so the server's own address, 127.0.0.1 for a
     * wildcard one). NULL: the endpoint is off. */
    const char *server_url;
    /* The PEM of the CA that signed the server's certificate; NULL for
     * plain HTTP. */
    const char *ca_pem;
    /* NULL: each job's token is random, and the endpoint compares it with
     * the job's Secret (the embedded server, whose admission lets nobody
     * but the controller make that Secret). Else the token of the job
     * ns/name/uid is this function's (0, or -1; out NUL-terminated hex),
     * the endpoint recomputes it and never reads the Secret, which only
     * carries it to the pods: operator mode, where the cluster lets anyone
     * who may make Secrets in a namespace make one of that name. */
    int (*token_for)(const char *ns, const char *name, const char *uid, char *out,
                     size_t len);
} trainer_progress_cfg;

/* The process's setting, read by the TrainJob controller for each job.
 * Off until trainer_progress_expect (trainyard server, before its
 * controllers start: the endpoint will be served); then pending (pods wait)
 * until trainer_progress_configure (once it listens) gives the URL and CA
 * (copied). Operator mode calls neither: the cluster's API server serves
 * no such endpoint. */
void trainer_progress_expect(void);
void trainer_progress_configure(const char *server_url, const char *ca_pem);
/* Operator mode: as trainer_progress_configure, tokens from token_for
 * (trainer_progress_cfg). */
void trainer_progress_configure_derived(const char *server_url, const char *ca_pem,
                                        int (*token_for)(const char *, const char *,
                                                         const char *, char *, size_t));
/* 1 with *out filled (copies: trainer_progress_cfg_clear), 0 off (*out
 * zeroed), -1 pending (*out zeroed). */
int trainer_progress_current(trainer_progress_cfg *out);
void trainer_progress_cfg_clear(trainer_progress_cfg *cfg);

/* The URL pods reach the server at, from the one it listens at (as
 * server_url writes it: scheme://address:port) into buf: a wildcard
 * address (0.0.0.0, ::) becomes the loopback one (pods of the local
 * runtime share the host's network), an IPv6 literal gets brackets. 0, or
 * -1 when url is not of that form or buf too small. */
int trainer_progress_pod_url(const char *url, char *buf, size_t len);

/* Makes sure the job's token Secret exists and is the job's: created with
 * a new random token when missing; one left by an earlier TrainJob of the
 * same name (another uid) is deleted and made again; ca.crt brought up to
 * date when the server's CA changed, and with token_for the token when it
 * is not the job's (a key changed, or a Secret made by someone else). job (borrowed) is the whole TrainJob.
 * 0, or -1 with err (TY_EEXISTS for a Secret of that name the job does not
 * control). */
int trainer_progress_ensure_secret(ty_kc *c, const trainer_progress_cfg *cfg,
                                   const json_t *job, ty_error *err);

/* Adds the volume, the read-only mount and the three variables to every
 * container and init container of template (a PodTemplateSpec, {metadata,
 * spec}; changed in place). Idempotent: what it added before is replaced,
 * as are variables of the same names the template set. */
void trainer_progress_inject(const trainer_progress_cfg *cfg, const json_t *job,
                             json_t *template);

/* Both, in that order (a caller with one template). 0, or -1 with err
 * (template then unchanged). */
int trainer_progress_prepare(ty_kc *c, const trainer_progress_cfg *cfg, const json_t *job,
                             json_t *template, ty_error *err);

#endif
