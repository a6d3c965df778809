/* audit.h - the audit log: kube-apiserver's audit.k8s.io/v1 Events, one JSON
 * object per line, for every request the policy (audit_policy.h) selects.
 *
 * The request path never writes: it fills an audit_rec (copies of what the
 * event needs) and queues it with a stage; one writer thread builds the
 * JSON and writes batches to the file (audit_file.h). The queue is bounded
 * (buffer_size events). When it is full, mode "blocking" (the default, as
 * kube-apiserver's) makes the request wait for room, so no event is lost;
 * mode "batch" drops the event and counts it (apiserver_audit_error_total),
 * as kube-apiserver's batch mode. audit_free writes everything queued before
 * it returns; a write error is logged and counted, never fatal. */
#ifndef TY_SERVER_AUDIT_H
#define TY_SERVER_AUDIT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "api/userinfo.h"
#include "base/buf.h"
#include "base/error.h"
#include "server/audit_policy.h"
#include "server/reqattr.h"

#define AUDIT_DEFAULT_BUFFER 10000    /* kube-apiserver's --audit-log-batch-buffer-size */
#define AUDIT_MAX_CAPTURE (3u << 20)  /* bodies kept for requestObject/responseObject */
#define AUDIT_ID_MAX 128

typedef struct ty_audit ty_audit;

typedef struct audit_opts {
    const char *log_path;    /* --audit-log-path; "-" = stdout */
    const char *policy_file; /* NULL: Metadata for everything */
    int max_size_mb;         /* --audit-log-maxsize; 0 = 100 (lumberjack's default) */
    int max_backups;         /* --audit-log-maxbackup; 0 = all kept */
    int max_age_days;        /* --audit-log-maxage; 0 = no age limit */
    bool drop_when_full;     /* --audit-log-mode batch */
    size_t buffer_size;      /* queued events; 0 = AUDIT_DEFAULT_BUFFER */
    long long max_bytes;     /* tests: rotate past this many bytes (overrides max_size_mb) */
} audit_opts;

/* What one request's events say. Filled by the request's thread, then only
 * read (by the writer thread, possibly after the request is gone): shared by
 * reference count. Strings are owned (malloc'd) unless said otherwise. */
typedef struct audit_rec {
    atomic_int refs;
    audit_decision d;
    char id[AUDIT_ID_MAX + 1];     /* auditID */
    struct timespec received;      /* requestReceivedTimestamp (CLOCK_REALTIME) */
    char *request_uri;             /* path and query */
    ty_user *user;                 /* NULL: not authenticated ("user":{}) */
    ty_user *impersonated;         /* impersonatedUser, or NULL */
    char source_ip[64];
    char *user_agent;              /* NULL when none */
    reqattr attr;
    unsigned code;                 /* the HTTP status answered */
    int authz;                     /* 1 allow, -1 forbid, 0 not decided */
    char *authz_reason;            /* NULL: none given */
    char *req_body;                /* the request body when the event needs it */
    size_t req_len;
    bool req_yaml;                 /* body is YAML (else JSON, anything else is dropped) */
    char *resp_body;               /* a JSON response body (Status of a failure, or
                                      responseObject at RequestResponse) */
    size_t resp_len;
    bool truncated;                /* a body was too large to keep */
    /* the request side's bookkeeping (audit_http.c) */
    bool decided;                  /* d is set */
    bool answered;                 /* the fields above are filled */
    bool long_running;             /* a watch or a log: ResponseStarted, then
                                      ResponseComplete when the stream ends */
    bool authn_failed;             /* a 401: only ResponseStarted, as kube-apiserver */
} audit_rec;

/* Reads the policy, opens the log and starts the writer. NULL with err (a
 * malformed policy names its rule and field). */
ty_audit *audit_new(const audit_opts *o, ty_error *err);
/* Writes what is queued, stops the writer, closes the log. */
void audit_free(ty_audit *a);

audit_decision audit_decide(const ty_audit *a, const ty_user *u, const reqattr *attr);

/* A new record (one reference), id and received time set. NULL when memory
 * ran out. */
audit_rec *audit_rec_new(void);
void audit_rec_ref(audit_rec *r);
void audit_rec_unref(audit_rec *r);

/* Queues stage's event for r (takes its own reference; r stays the
 * caller's). Nothing when the decision omits the stage or the level is None. */
void audit_emit(ty_audit *a, audit_rec *r, audit_stage stage);
/* Waits until everything queued so far is written (tests). */
void audit_sync(ty_audit *a);

/* Appends the Event for r at stage, stamped at stage_ts, as one line of
 * JSON (no newline). -1 when memory ran out (b is left as it was). */
int audit_event_write(ty_buf *b, const audit_rec *r, audit_stage stage,
                      struct timespec stage_ts);
/* The same parsed (tests). New reference, or NULL. */
json_t *audit_event_json(const audit_rec *r, audit_stage stage, struct timespec stage_ts);

typedef struct audit_stats {
    unsigned long long events;   /* written */
    unsigned long long dropped;  /* queue full in batch mode */
    unsigned long long errors;   /* events lost to write errors */
    unsigned long rotations;
} audit_stats;
void audit_get_stats(ty_audit *a, audit_stats *out);

/* A random (version 4) UUID, 36 characters and a NUL. */
void audit_new_uuid(char out[37]);

#endif
