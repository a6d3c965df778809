/* tls.h - the server's TLS material: the serving certificate and key, the
 * CA that client certificates must chain to, and the self-signed pair made
 * in the data directory when no certificate is given.
 *
 * Everything is read and checked before the server starts (a certificate
 * that does not parse, a key that is not the certificate's, a CA file with
 * no certificate in it: the error names the file), so that a server never
 * starts half-secured. The PEM text is what libmicrohttpd takes. */
#ifndef TY_SERVER_TLS_H
#define TY_SERVER_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* The files of <data-dir>/pki/, kube-apiserver's names. */
#define TLS_PKI_DIR "pki"
#define TLS_CA_CERT "ca.crt"
#define TLS_CA_KEY "ca.key"
#define TLS_SERVING_CERT "apiserver.crt"
#define TLS_SERVING_KEY "apiserver.key"

/* The largest certificate, key or CA bundle file read. */
#define TLS_FILE_MAX ((size_t)1024 * 1024)

typedef struct tls_pem {
    char *cert; /* the serving certificate chain, PEM (owned) */
    char *key;  /* its private key, PEM (owned) */
} tls_pem;

/* Reads cert_file and key_file (--tls-cert-file, --tls-private-key-file)
 * and checks that they parse and belong together. 0, or -1 with err naming
 * the file. On failure *out is left empty. */
int tls_load_pair(const char *cert_file, const char *key_file, tls_pem *out, ty_error *err);

/* The self-signed pair of <data_dir>/pki/: a CA (ca.crt, ca.key) and a
 * serving certificate it signed (apiserver.crt, apiserver.key) for
 * 127.0.0.1, ::1, localhost and the host name. Made when absent (keys mode
 * 0600), reused when present; the serving certificate is made again when
 * it has less than 30 days left, its CA changed or it does not name the
 * host. *made_ca tells whether
 * a new CA was made (NULL: not wanted). A present but unreadable or
 * malformed file is an error naming it, never replaced. */
int tls_ensure_pki(const char *data_dir, tls_pem *out, bool *made_ca, ty_error *err);

/* Reads a CA bundle (--client-ca-file): PEM with at least one certificate.
 * *pem is malloc'd (caller frees). -1 with err naming the file. */
int tls_load_ca(const char *file, char **pem, ty_error *err);

void tls_pem_free(tls_pem *p);

/* Reads a whole file of at most max bytes, NUL-terminated (*len without
 * the NUL). Caller frees *out. -1 with err naming the file. */
int tls_read_file(const char *path, const char *what, size_t max, char **out, size_t *len,
                  ty_error *err);
/* Writes data to path atomically (a temporary file renamed over it) with
 * the given mode. -1 with err naming the file. */
int tls_write_file(const char *path, const char *data, size_t len, unsigned mode,
                   ty_error *err);

#endif
