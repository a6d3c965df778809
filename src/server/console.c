/* console.c - the web console's static files at /ui/ (console.h). */
#include "server/console.h"

#include <string.h>
#include <strings.h>

/* Only the server's own files run: no inline script or style, nothing from
 * elsewhere, no framing (clickjacking), no referrer leaving with a URL that
 * may still hold a #token= (browsers never send the fragment, but a page's
 * links could carry its path). connect-src 'self' keeps the page talking to
 * this server's API alone. */
#define CONSOLE_CSP                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "    \
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "          \
    "form-action 'self'; frame-ancestors 'none'"

bool console_path(const char *url)
{
    return strncmp(url, "/ui", 3) == 0 && (url[3] == '\0' || url[3] == '/');
}

const char *console_content_type(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".json", "application/json"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');

    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcasecmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

static const console_asset *find_asset(const char *name)
{
    for (size_t i = 0; i < console_nassets; i++)
        if (strcmp(console_assets[i].name, name) == 0)
            return &console_assets[i];
    return NULL;
}

static void security_headers(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, "Content-Security-Policy", CONSOLE_CSP);
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
    MHD_add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
}

static enum MHD_Result answer_text(http_req *r, unsigned status, const char *text)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
    security_headers(resp);
    if (status == 405)
        MHD_add_response_header(resp, "Allow", "GET, HEAD");
    return http_queue(r, status, resp);
}

/* If-None-Match holds the tag (a list, or "*"): the browser's copy is current. */
static bool not_modified(http_req *r, const char *etag)
{
    const char *inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "If-None-Match");
    size_t n = strlen(etag);

    if (!inm)
        return false;
    if (strcmp(inm, "*") == 0)
        return true;
    for (const char *p = strstr(inm, etag); p; p = strstr(p + 1, etag))
        if ((p == inm || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/') &&
            (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
            return true;
    return false;
}

enum MHD_Result console_handle(http_req *r)
{
    const char *name = r->url + 3;
    const console_asset *a;
    struct MHD_Response *resp;
    unsigned status = 200;

    if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0)
        return answer_text(r, 405, "method not allowed: the console's files are read-only\n");
    if (*name == '\0') {
        /* relative URLs in index.html resolve against /ui/, not / */
        resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        MHD_add_response_header(resp, "Location", "/ui/");
        security_headers(resp);
        return http_queue(r, 301, resp);
    }
    name++; /* past the '/' */
    if (*name == '\0')
        name = "index.html";
    /* The table's names are flat: a path with another '/' (or "..") is none. */
    if (strchr(name, '/') || !(a = find_asset(name)))
        return answer_text(r, 404, "404 page not found\n");
    if (not_modified(r, a->etag)) {
        status = 304;
        resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    }
    if (!resp)
        return MHD_NO;
    if (status == 200)
        MHD_add_response_header(resp, "Content-Type", console_content_type(a->name));
    /* http_queue adds Cache-Control: no-cache: the browser asks again every
     * time and gets 304 while the binary is the same, so a new build's files
     * are never mixed with an old one's. */
    MHD_add_response_header(resp, "ETag", a->etag);
    security_headers(resp);
    return http_queue(r, status, resp);
}
