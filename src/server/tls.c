/* tls.c - see tls.h. */
#include "server/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"

#define CA_DAYS (10 * 365)
#define SERVING_DAYS 365
#define RENEW_DAYS 30 /* a serving certificate with less left is made again */
#define DAY_S (24 * 3600)

int tls_read_file(const char *path, const char *what, size_t max, char **out, size_t *len,
                  ty_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf = NULL;
    size_t n = 0;

    *out = NULL;
    if (fd < 0)
        return ty_seterr(err, TY_EBADREQUEST, "cannot read %s %s: %s", what, path,
                         strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        close(fd);
        return ty_seterr(err, TY_EBADREQUEST, "%s %s: not a regular file of at most %zu bytes",
                         what, path, max);
    }
    if (!(buf = malloc((size_t)st.st_size + 1))) {
        close(fd);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return ty_seterr(err, TY_EBADREQUEST, "cannot read %s %s: %s", what, path,
                             strerror(e));
        }
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

int tls_write_file(const char *path, const char *data, size_t len, unsigned mode,
                   ty_error *err)
{
    char tmp[4200];
    int fd;
    size_t off = 0;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
    if (fd < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", tmp, strerror(errno));
    /* The umask must not widen nor narrow what was asked for. */
    if (fchmod(fd, (mode_t)mode) < 0)
        goto fail;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            goto fail;
        off += (size_t)w;
    }
    if (fsync(fd) < 0 || close(fd) < 0) {
        fd = -1;
        goto fail;
    }
    if (rename(tmp, path) < 0) {
        fd = -1;
        goto fail;
    }
    return 0;
fail:
    ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

void tls_pem_free(tls_pem *p)
{
    if (!p)
        return;
    free(p->cert);
    if (p->key) /* a private key does not linger in freed memory */
        explicit_bzero(p->key, strlen(p->key));
    free(p->key);
    p->cert = p->key = NULL;
}

/* The certificates of a PEM text: *n of them in *list (caller deinits each
 * and gnutls_free's the list). */
static int parse_certs(const char *pem, size_t len, const char *what, const char *path,
                       gnutls_x509_crt_t **list, unsigned *n, ty_error *err)
{
    gnutls_datum_t d = {.data = (unsigned char *)pem, .size = (unsigned)len};
    int rc;

    *list = NULL;
    *n = 0;
    rc = gnutls_x509_crt_list_import2(list, n, &d, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || *n == 0) {
        if (rc >= 0)
            gnutls_free(*list);
        *list = NULL;
        *n = 0;
        return ty_seterr(err, TY_EBADREQUEST, "%s %s: no PEM certificate in it (%s)", what,
                         path, rc < 0 ? gnutls_strerror(rc) : "empty");
    }
    return 0;
}

static void free_certs(gnutls_x509_crt_t *list, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        gnutls_x509_crt_deinit(list[i]);
    gnutls_free(list);
}

/* Checks that the key parses and is the certificate's, as the TLS layer
 * will when it loads them. */
static int check_pair(const char *cert, size_t clen, const char *key, size_t klen,
                      const char *cert_file, const char *key_file, ty_error *err)
{
    gnutls_certificate_credentials_t cred;
    gnutls_x509_privkey_t pk;
    gnutls_datum_t c = {.data = (unsigned char *)cert, .size = (unsigned)clen};
    gnutls_datum_t k = {.data = (unsigned char *)key, .size = (unsigned)klen};
    int rc;

    if (gnutls_x509_privkey_init(&pk) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    rc = gnutls_x509_privkey_import2(pk, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_x509_privkey_deinit(pk);
    if (rc < 0)
        return ty_seterr(err, TY_EBADREQUEST,
                         "--tls-private-key-file %s: not an unencrypted PEM private key (%s)",
                         key_file, gnutls_strerror(rc));
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    rc = gnutls_certificate_set_x509_key_mem2(cred, &c, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(cred);
    if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
        return ty_seterr(err, TY_EBADREQUEST,
                         "--tls-private-key-file %s is not the key of --tls-cert-file %s",
                         key_file, cert_file);
    if (rc < 0)
        return ty_seterr(err, TY_EBADREQUEST, "--tls-cert-file %s with key %s: %s", cert_file,
                         key_file, gnutls_strerror(rc));
    return 0;
}

int tls_load_pair(const char *cert_file, const char *key_file, tls_pem *out, ty_error *err)
{
    gnutls_x509_crt_t *list;
    unsigned n;
    size_t clen, klen;

    memset(out, 0, sizeof(*out));
    if (tls_read_file(cert_file, "--tls-cert-file", TLS_FILE_MAX, &out->cert, &clen, err) < 0)
        return -1;
    if (tls_read_file(key_file, "--tls-private-key-file", TLS_FILE_MAX, &out->key, &klen,
                      err) < 0)
        goto fail;
    if (parse_certs(out->cert, clen, "--tls-cert-file", cert_file, &list, &n, err) < 0)
        goto fail;
    if (gnutls_x509_crt_get_expiration_time(list[0]) < time(NULL))
        ty_warn("--tls-cert-file %s has expired: clients will refuse it", cert_file);
    free_certs(list, n);
    if (check_pair(out->cert, clen, out->key, klen, cert_file, key_file, err) < 0)
        goto fail;
    return 0;
fail:
    tls_pem_free(out);
    return -1;
}

int tls_load_ca(const char *file, char **pem, ty_error *err)
{
    gnutls_x509_crt_t *list;
    unsigned n;
    size_t len;

    if (tls_read_file(file, "--client-ca-file", TLS_FILE_MAX, pem, &len, err) < 0)
        return -1;
    if (parse_certs(*pem, len, "--client-ca-file", file, &list, &n, err) < 0) {
        free(*pem);
        *pem = NULL;
        return -1;
    }
    free_certs(list, n);
    return 0;
}

/* ---- the self-signed pair ---------------------------------------------- */

typedef struct keypair {
    gnutls_x509_crt_t crt;
    gnutls_x509_privkey_t key;
} keypair;

static void keypair_free(keypair *kp)
{
    if (kp->crt)
        gnutls_x509_crt_deinit(kp->crt);
    if (kp->key)
        gnutls_x509_privkey_deinit(kp->key);
    kp->crt = NULL;
    kp->key = NULL;
}

/* Reads a pair of pki/; 1 when both files are absent, 0 when read, -1 on
 * a file that is there but does not parse. */
static int keypair_read(const char *dir, const char *cert_name, const char *key_name,
                        keypair *kp, ty_error *err)
{
    char cpath[4200], kpath[4200];
    char *cert = NULL, *key = NULL;
    size_t clen, klen;
    gnutls_datum_t d;
    int rc = -1, r;

    snprintf(cpath, sizeof(cpath), "%s/%s", dir, cert_name);
    snprintf(kpath, sizeof(kpath), "%s/%s", dir, key_name);
    if (access(cpath, F_OK) < 0 && errno == ENOENT && access(kpath, F_OK) < 0 &&
        errno == ENOENT)
        return 1;
    if (tls_read_file(cpath, "certificate", TLS_FILE_MAX, &cert, &clen, err) < 0 ||
        tls_read_file(kpath, "private key", TLS_FILE_MAX, &key, &klen, err) < 0)
        goto out;
    if (gnutls_x509_crt_init(&kp->crt) < 0 || gnutls_x509_privkey_init(&kp->key) < 0) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    d = (gnutls_datum_t){.data = (unsigned char *)cert, .size = (unsigned)clen};
    if ((r = gnutls_x509_crt_import(kp->crt, &d, GNUTLS_X509_FMT_PEM)) < 0) {
        ty_seterr(err, TY_EBADREQUEST, "certificate %s does not parse: %s (remove it and the "
                  "server makes a new one)", cpath, gnutls_strerror(r));
        goto out;
    }
    d = (gnutls_datum_t){.data = (unsigned char *)key, .size = (unsigned)klen};
    if ((r = gnutls_x509_privkey_import2(kp->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        ty_seterr(err, TY_EBADREQUEST, "private key %s does not parse: %s", kpath,
                  gnutls_strerror(r));
        goto out;
    }
    rc = 0;
out:
    if (rc < 0)
        keypair_free(kp);
    free(cert);
    if (key)
        explicit_bzero(key, klen);
    free(key);
    return rc;
}

static int gt(int rc, const char *what, ty_error *err)
{
    if (rc < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot make the certificate (%s): %s", what,
                         gnutls_strerror(rc));
    return 0;
}

/* What both certificates share: version, serial, validity, subject, key. */
static int cert_common(keypair *kp, const char *cn, int days, ty_error *err)
{
    unsigned char serial[16];
    time_t now = time(NULL);

    if (gt(gnutls_x509_privkey_init(&kp->key), "key", err) < 0 ||
        gt(gnutls_x509_privkey_generate(kp->key, GNUTLS_PK_ECDSA,
                                        GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0),
           "key", err) < 0 ||
        gt(gnutls_x509_crt_init(&kp->crt), "init", err) < 0 ||
        gt(gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)), "serial", err) < 0)
        return -1;
    serial[0] &= 0x7f; /* a positive serial number */
    serial[0] |= 0x01;
    if (gt(gnutls_x509_crt_set_version(kp->crt, 3), "version", err) < 0 ||
        gt(gnutls_x509_crt_set_serial(kp->crt, serial, sizeof(serial)), "serial", err) < 0 ||
        /* an hour back: a client whose clock is a little behind still takes it */
        gt(gnutls_x509_crt_set_activation_time(kp->crt, now - 3600), "time", err) < 0 ||
        gt(gnutls_x509_crt_set_expiration_time(kp->crt, now + (time_t)days * DAY_S), "time",
           err) < 0 ||
        gt(gnutls_x509_crt_set_dn_by_oid(kp->crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                         (unsigned)strlen(cn)),
           "subject", err) < 0 ||
        gt(gnutls_x509_crt_set_key(kp->crt, kp->key), "key", err) < 0)
        return -1;
    unsigned char id[64];
    size_t idlen = sizeof(id);
    if (gt(gnutls_x509_crt_get_key_id(kp->crt, 0, id, &idlen), "key id", err) < 0 ||
        gt(gnutls_x509_crt_set_subject_key_id(kp->crt, id, idlen), "key id", err) < 0)
        return -1;
    return 0;
}

static int make_ca(keypair *ca, ty_error *err)
{
    if (cert_common(ca, "trainyard-ca", CA_DAYS, err) < 0 ||
        gt(gnutls_x509_crt_set_basic_constraints(ca->crt, 1, -1), "constraints", err) < 0 ||
        gt(gnutls_x509_crt_set_key_usage(ca->crt, GNUTLS_KEY_KEY_CERT_SIGN |
                                                      GNUTLS_KEY_CRL_SIGN |
                                                      GNUTLS_KEY_DIGITAL_SIGNATURE),
           "usage", err) < 0 ||
        gt(gnutls_x509_crt_sign2(ca->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0), "sign",
           err) < 0) {
        keypair_free(ca);
        return -1;
    }
    return 0;
}

static int make_serving(const keypair *ca, keypair *sv, ty_error *err)
{
    unsigned char v4[4], v6[16], id[64];
    size_t idlen = sizeof(id);
    char host[256] = "";

    inet_pton(AF_INET, "127.0.0.1", v4);
    inet_pton(AF_INET6, "::1", v6);
    gethostname(host, sizeof(host) - 1);
    if (cert_common(sv, "trainyard-apiserver", SERVING_DAYS, err) < 0 ||
        gt(gnutls_x509_crt_set_basic_constraints(sv->crt, 0, -1), "constraints", err) < 0 ||
        gt(gnutls_x509_crt_set_key_usage(sv->crt, GNUTLS_KEY_DIGITAL_SIGNATURE), "usage",
           err) < 0 ||
        gt(gnutls_x509_crt_set_key_purpose_oid(sv->crt, GNUTLS_KP_TLS_WWW_SERVER, 0), "usage",
           err) < 0 ||
        gt(gnutls_x509_crt_set_subject_alt_name(sv->crt, GNUTLS_SAN_IPADDRESS, v4, 4,
                                                GNUTLS_FSAN_APPEND),
           "names", err) < 0 ||
        gt(gnutls_x509_crt_set_subject_alt_name(sv->crt, GNUTLS_SAN_IPADDRESS, v6, 16,
                                                GNUTLS_FSAN_APPEND),
           "names", err) < 0 ||
        gt(gnutls_x509_crt_set_subject_alt_name(sv->crt, GNUTLS_SAN_DNSNAME, "localhost", 9,
                                                GNUTLS_FSAN_APPEND),
           "names", err) < 0)
        goto fail;
    if (host[0] && strcmp(host, "localhost") != 0 &&
        gt(gnutls_x509_crt_set_subject_alt_name(sv->crt, GNUTLS_SAN_DNSNAME, host,
                                                (unsigned)strlen(host), GNUTLS_FSAN_APPEND),
           "names", err) < 0)
        goto fail;
    if (gt(gnutls_x509_crt_get_subject_key_id(ca->crt, id, &idlen, NULL), "issuer", err) < 0 ||
        gt(gnutls_x509_crt_set_authority_key_id(sv->crt, id, idlen), "issuer", err) < 0 ||
        gt(gnutls_x509_crt_sign2(sv->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0), "sign",
           err) < 0)
        goto fail;
    return 0;
fail:
    keypair_free(sv);
    return -1;
}

/* PEM of the certificate and of the key (PKCS#8, unencrypted). */
static int export_pair(const keypair *kp, gnutls_datum_t *cert, gnutls_datum_t *key,
                       ty_error *err)
{
    cert->data = key->data = NULL;
    if (gt(gnutls_x509_crt_export2(kp->crt, GNUTLS_X509_FMT_PEM, cert), "export", err) < 0)
        return -1;
    if (gt(gnutls_x509_privkey_export2_pkcs8(kp->key, GNUTLS_X509_FMT_PEM, NULL,
                                             GNUTLS_PKCS_PLAIN, key),
           "export", err) < 0) {
        gnutls_free(cert->data);
        cert->data = NULL;
        return -1;
    }
    return 0;
}

static void datum_free(gnutls_datum_t *d, bool secret)
{
    if (d->data && secret)
        explicit_bzero(d->data, d->size);
    gnutls_free(d->data);
    d->data = NULL;
}

/* Writes the key first: a certificate without its key would be read back
 * as a broken pair. */
static int keypair_write(const char *dir, const char *cert_name, const char *key_name,
                         const keypair *kp, tls_pem *pem, ty_error *err)
{
    char cpath[4200], kpath[4200];
    gnutls_datum_t c, k;
    int rc = -1;

    snprintf(cpath, sizeof(cpath), "%s/%s", dir, cert_name);
    snprintf(kpath, sizeof(kpath), "%s/%s", dir, key_name);
    if (export_pair(kp, &c, &k, err) < 0)
        return -1;
    if (tls_write_file(kpath, (const char *)k.data, k.size, 0600, err) < 0 ||
        tls_write_file(cpath, (const char *)c.data, c.size, 0644, err) < 0)
        goto out;
    if (pem) {
        pem->cert = strndup((const char *)c.data, c.size);
        pem->key = strndup((const char *)k.data, k.size);
        if (!pem->cert || !pem->key) {
            tls_pem_free(pem);
            ty_seterr(err, TY_EINTERNAL, "out of memory");
            goto out;
        }
    }
    rc = 0;
out:
    datum_free(&c, false);
    datum_free(&k, true);
    return rc;
}

/* True when the serving certificate may be served again: signed by this
 * CA, with more than RENEW_DAYS left, naming this host (a data directory
 * moved to another machine, or a renamed one, gets a new one). */
static bool serving_usable(const keypair *ca, const keypair *sv)
{
    unsigned status = 0;
    gnutls_x509_crt_t chain[1] = {sv->crt};
    char host[256] = "";

    if (gnutls_x509_crt_get_expiration_time(sv->crt) < time(NULL) + RENEW_DAYS * DAY_S)
        return false;
    gethostname(host, sizeof(host) - 1);
    if (host[0] && !gnutls_x509_crt_check_hostname(sv->crt, host))
        return false;
    if (gnutls_x509_crt_list_verify(chain, 1, &ca->crt, 1, NULL, 0, 0, &status) < 0 ||
        status != 0)
        return false;
    return true;
}

int tls_ensure_pki(const char *data_dir, tls_pem *out, bool *made_ca, ty_error *err)
{
    char dir[4096];
    keypair ca = {0}, sv = {0};
    int r, rc = -1;

    memset(out, 0, sizeof(*out));
    if (made_ca)
        *made_ca = false;
    snprintf(dir, sizeof(dir), "%s/%s", data_dir, TLS_PKI_DIR);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return ty_seterr(err, TY_EINTERNAL, "cannot make %s: %s", dir, strerror(errno));
    if ((r = keypair_read(dir, TLS_CA_CERT, TLS_CA_KEY, &ca, err)) < 0)
        goto out;
    if (r == 1) {
        ty_info("tls: making a self-signed CA in %s", dir);
        if (make_ca(&ca, err) < 0 ||
            keypair_write(dir, TLS_CA_CERT, TLS_CA_KEY, &ca, NULL, err) < 0)
            goto out;
        if (made_ca)
            *made_ca = true;
    }
    if ((r = keypair_read(dir, TLS_SERVING_CERT, TLS_SERVING_KEY, &sv, err)) < 0)
        goto out;
    if (r == 0 && serving_usable(&ca, &sv)) {
        gnutls_datum_t c, k;
        if (export_pair(&sv, &c, &k, err) < 0)
            goto out;
        out->cert = strndup((const char *)c.data, c.size);
        out->key = strndup((const char *)k.data, k.size);
        datum_free(&c, false);
        datum_free(&k, true);
        if (!out->cert || !out->key) {
            tls_pem_free(out);
            ty_seterr(err, TY_EINTERNAL, "out of memory");
            goto out;
        }
        rc = 0;
        goto out;
    }
    keypair_free(&sv);
    ty_info("tls: making a serving certificate in %s", dir);
    if (make_serving(&ca, &sv, err) < 0 ||
        keypair_write(dir, TLS_SERVING_CERT, TLS_SERVING_KEY, &sv, out, err) < 0)
        goto out;
    rc = 0;
out:
    keypair_free(&ca);
    keypair_free(&sv);
    return rc;
}
