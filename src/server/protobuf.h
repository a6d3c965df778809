/* protobuf.h - internal to src/server: the Kubernetes protobuf wire format for
 * the few built-in kinds kubectl's typed commands send that way
 * (`kubectl create namespace|configmap|secret|priorityclass|service`).
 *
 * client-go sends those bodies as application/vnd.kubernetes.protobuf and does
 * not retry in JSON on a 415, so the server decodes them into the same JSON
 * the JSON path would have produced. Answers are always JSON, which client-go
 * accepts. */
#ifndef TY_SERVER_PROTOBUF_H
#define TY_SERVER_PROTOBUF_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"

/* Decodes a "k8s\0"-prefixed runtime.Unknown envelope. Returns the object as
 * JSON (caller owns) or NULL with TY_EMEDIATYPE for a kind this decoder does
 * not know, TY_EBADREQUEST for malformed input. */
json_t *pb_decode_object(const unsigned char *buf, size_t len, ty_error *err);

#endif
