/* console.h - internal to src/server: the web console's static files
 * (console/ at the top of the tree, built into the binary by
 * cmake/embed_console.cmake) served at /ui/. They carry no data: the page
 * asks the public API for everything with the user's own bearer token, so
 * serving them needs no credentials and RBAC applies to what it shows
 * (docs/console.md). */
#ifndef TY_SERVER_CONSOLE_H
#define TY_SERVER_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

#include "server/http.h"

/* One embedded file; the generated console_assets.c holds the table. */
typedef struct console_asset {
    const char *name;          /* "index.html": a name directly under /ui/ */
    const unsigned char *data; /* its bytes (static) */
    size_t len;
    const char *etag;          /* "\"<sha256 prefix>\"", quotes included */
} console_asset;

extern const console_asset console_assets[];
extern const size_t console_nassets;

/* True for "/ui" and "/ui/...": paths console_handle answers, without
 * authentication (server.c skips the gate for them, not the guard). */
bool console_path(const char *url);
/* The file's Content-Type by its name's extension. */
const char *console_content_type(const char *name);
/* Answers a console path: the file, 304 for a matching If-None-Match, a
 * redirect from /ui to /ui/, 404 or 405. */
enum MHD_Result console_handle(http_req *r);

#endif
