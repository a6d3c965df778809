/* review.h - internal to src/server: the create-only review APIs
 * (authorization.k8s.io/v1 access and rules reviews, authentication.k8s.io/v1
 * SelfSubjectReview). See review.c. */
#ifndef TY_SERVER_REVIEW_H
#define TY_SERVER_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "server/http.h"

/* One review resource, for discovery (verbs: create only). */
typedef struct review_resource {
    const char *group, *plural, *kind;
    bool namespaced;
} review_resource;

/* The review resources (a static table of *n entries). */
const review_resource *review_resources(size_t *n);

/* Answers r when its path is a review's (*handled true), else returns
 * MHD_NO with *handled false. */
enum MHD_Result review_handle(http_req *r, bool *handled);

#endif
