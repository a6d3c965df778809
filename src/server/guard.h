/* guard.h - internal to src/server: what a request must pass before any
 * handler sees it, decided as soon as its headers are in (the body is never
 * read for a request refused here).
 *
 * - Host: a loopback name, an IP literal or a configured name. A web page
 *   that rebinds its own DNS name to 127.0.0.1 sends its name as Host.
 * - Origin: absent, the same origin as Host, or one matching a configured
 *   regular expression. Browsers send it with every cross-site write.
 * - Content-Type of a POST or PUT: JSON, YAML or protobuf. The types a
 *   cross-site form may send without asking first (text/plain, forms) are
 *   what a drive-by page would use.
 * - In flight: at most N read-only and M mutating requests at once, as
 *   kube-apiserver's --max-requests-inflight / --max-mutating-requests-inflight;
 *   watches and followed logs do not count. Over the limit: 429 + Retry-After.
 */
#ifndef TY_SERVER_GUARD_H
#define TY_SERVER_GUARD_H

#include <microhttpd.h>
#include <stdbool.h>

#include "base/error.h"
#include "server/server.h"

typedef struct http_guard http_guard;

/* What guard_admit took, to hand back to guard_release when the request ends. */
typedef enum guard_slot { GUARD_SLOT_NONE = 0, GUARD_SLOT_READ, GUARD_SLOT_MUTATE } guard_slot;

/* Builds the guard from the server's options (lists are copied). NULL with err
 * on a malformed --allowed-hosts or --cors-allowed-origins. */
http_guard *guard_new(const server_opts *opts, ty_error *err);
void guard_free(http_guard *g);

/* Checks a request whose headers have arrived. 0: go on (*slot says what to
 * release). -1: refuse with err (403, 415 or 429); nothing is held. */
int guard_admit(http_guard *g, struct MHD_Connection *conn, const char *method,
                const char *url, guard_slot *slot, ty_error *err);
void guard_release(http_guard *g, guard_slot slot);

/* The request's Origin when it is another origin that the configuration
 * allows (CORS headers go back to it), else NULL. Borrowed from the request. */
const char *guard_cors_origin(http_guard *g, struct MHD_Connection *conn);

/* True for requests that stream for as long as the client wants: watches and
 * followed logs. They are not counted in flight and have no idle timeout. */
bool guard_long_running(struct MHD_Connection *conn, const char *method, const char *url);

/* Exposed for unit tests: the host part of a Host header value is allowed. */
bool guard_host_allowed(const http_guard *g, const char *host_header);

#endif
