/* client.h - an HTTP client for Trainyard's (and any Kubernetes) API server.
 *
 * Used by the CLI (which never opens the database) and by benchmarks. One
 * ty_client keeps one connection alive; use one per thread. */
#ifndef TY_CLIENT_CLIENT_H
#define TY_CLIENT_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "api/registry.h"
#include "base/buf.h"
#include "base/error.h"
#include "client/kc_http.h"

typedef struct ty_client ty_client;

/* base_url like "http://127.0.0.1:8080", no credentials (the in-process
 * tests' servers ask for none). Caller frees with client_free. */
ty_client *client_new(const char *base_url, ty_error *err);
/* A client with the server, TLS settings and credentials of o
 * (kc_http_opts; its rate limits and timeouts are not used). */
ty_client *client_new_opts(const kc_http_opts *o, ty_error *err);
/* A client as kubectl makes one: from the kubeconfig at path (NULL:
 * $KUBECONFIG, else ~/.kube/config) and its context (NULL: the current
 * one), with the server URL replaced by server when that is not NULL.
 * NULL with err (TY_ENOTFOUND when the file is not there). */
ty_client *client_from_kubeconfig(const char *path, const char *context, const char *server,
                                  ty_error *err);
void client_free(ty_client *c);
const char *client_base_url(const ty_client *c);

typedef struct client_resp {
    long status;   /* HTTP status; 0 when no answer came */
    ty_buf body;   /* response body; free with client_resp_free */
} client_resp;
void client_resp_free(client_resp *resp);

/* One request. path includes the query ("/api/v1/pods?limit=500"). body may be
 * NULL. Returns 0 when an HTTP answer came back (any status), -1 with
 * TY_EUNAVAILABLE when the server could not be reached. */
int client_request(ty_client *c, const char *method, const char *path, const char *ctype,
                   const char *body, size_t len, const char *accept, client_resp *resp,
                   ty_error *err);

/* Streams a GET to out as it arrives (logs, watches) when the answer is 2xx;
 * any other answer's body goes to errbody instead. Returns as above; *status
 * gets the HTTP status. */
int client_stream(ty_client *c, const char *path, FILE *out, long *status, ty_buf *errbody,
                  ty_error *err);

/* Like client_request, but decodes a JSON answer: returns the value for 2xx,
 * or NULL with err built from the Status the server sent (code from the HTTP
 * status, text = Status.message, causes copied). Caller owns the result. */
json_t *client_call_json(ty_client *c, const char *method, const char *path, const char *ctype,
                         const json_t *body, ty_error *err);

/* The REST path of a resource: "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs[/name]".
 * ns is ignored for cluster-scoped kinds; ns NULL on a namespaced kind means all
 * namespaces. name may be NULL. */
void client_resource_path(const api_resource *res, const char *ns, const char *name,
                          char *buf, size_t len);

/* Finds a resource by what a user types: plural, singular, short name or kind
 * (any case), optionally qualified by group ("jobs.batch.volcano.sh"). */
const api_resource *client_resolve(const char *what);

/* URL-escapes s for a query value. Caller frees. */
char *client_escape(const char *s);

/* Turns an HTTP status into the error code it stands for. */
ty_errcode client_errcode(long status);

#endif
