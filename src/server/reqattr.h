/* reqattr.h - what a request asks to do, in the terms authorization and
 * audit use: kube-apiserver's RequestInfo (verb, API group, resource,
 * subresource, namespace, name) or a non-resource path. */
#ifndef TY_SERVER_REQATTR_H
#define TY_SERVER_REQATTR_H

#include <stdbool.h>

#define REQATTR_MAX 256 /* each field; longer values are cut (they match nothing) */

typedef struct reqattr {
    bool resource_request;      /* false: path/verb describe a non-resource URL */
    char verb[24];              /* get list watch create update patch delete
                                   deletecollection; for non-resource URLs the
                                   lowercased method (get, post, put, ...) */
    char path[REQATTR_MAX];     /* the URL path */
    char api_group[REQATTR_MAX]; /* "" for the core group */
    char api_version[64];
    char resource[REQATTR_MAX]; /* plural, e.g. "pods" */
    char subresource[64];       /* "status", "log", "binding", ... or "" */
    char ns[REQATTR_MAX];       /* "" when not namespaced */
    char name[REQATTR_MAX];     /* "" for collections */
} reqattr;

/* Fills a from the method, the path (no query) and the query string's
 * watch flag (watch = "true"/"1"). Never fails: what is not a resource path
 * is a non-resource request. */
void reqattr_parse(reqattr *a, const char *method, const char *path, const char *watch);

#endif
