/* test_authn.c - authentication: the token files (kube-apiserver's CSV,
 * bad lines named, duplicates, reload on change), client certificates, the
 * self-signed pki, and the whole path in-process: a TLS server with
 * authentication driven by the project's client (so ASan covers it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "client/client.h"
#include "server/authn.h"
#include "server/server.h"
#include "server/tls.h"
#include "store/store.h"

static char tmpdir[64];

static void write_text(const char *path, const char *text)
{
    char tmp[256];
    FILE *f;
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    /* a rename: a new inode, as an editor or `trainyard user add` makes */
    assert_int_equal(rename(tmp, path), 0);
}

static char *path_in(const char *name)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", tmpdir, name);
    return p[i];
}

static int setup_dir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/ty-test-authn.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown_dir(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static ty_authn *authn_of(const char *file, const char *admin, int reload_ms, ty_error *err)
{
    authn_opts o = {.token_auth_file = file, .admin_token_file = admin, .reload_ms = reload_ms};
    return authn_new(&o, err);
}

static void test_token_csv(void **state)
{
    ty_error err;
    ty_user *u = NULL;
    ty_authn *a;
    (void)state;

    ty_error_init(&err);
    write_text(path_in("t.csv"), "# a comment\n"
                                 "\n"
                                 "tok1,alice,uid-1,\"system:masters, team-a ,,\"\n"
                                 "\"tok,2\",bob,,team-b\r\n"
                                 "  tok3, carol ,uid-3\n");
    a = authn_of(path_in("t.csv"), NULL, -1, &err);
    assert_non_null(a);
    assert_int_equal(authn_token(a, "tok1", &u, &err), 0);
    assert_string_equal(u->name, "alice");
    assert_string_equal(u->uid, "uid-1");
    assert_int_equal(u->ngroups, 3); /* blanks trimmed, empty groups dropped, +authenticated */
    assert_string_equal(u->groups[0], "system:masters");
    assert_string_equal(u->groups[1], "team-a");
    assert_true(userinfo_in_group(u, USERINFO_AUTHENTICATED));
    userinfo_free(u);
    assert_int_equal(authn_token(a, "tok,2", &u, &err), 0);
    assert_string_equal(u->name, "bob");
    assert_null(u->uid);
    assert_true(userinfo_in_group(u, "team-b"));
    userinfo_free(u);
    /* leading blanks skipped, the user name trimmed */
    assert_int_equal(authn_token(a, "tok3", &u, &err), 0);
    assert_string_equal(u->name, "carol");
    userinfo_free(u);
    u = NULL;
    assert_int_equal(authn_token(a, "tok", &u, &err), -1);
    assert_int_equal(err.code, TY_EUNAUTH);
    assert_null(u);
    assert_int_equal(authn_token(a, "", &u, &err), -1);
    assert_int_equal(authn_token(a, "tok1 ", &u, &err), -1);
    authn_free(a);
    ty_error_clear(&err);
}

static void expect_bad(const char *text, const char *want)
{
    ty_error err;
    ty_authn *a;

    ty_error_init(&err);
    write_text(path_in("bad.csv"), text);
    a = authn_of(path_in("bad.csv"), NULL, -1, &err);
    assert_null(a);
    if (!strstr(err.text, want))
        fail_msg("want \"%s\" in \"%s\"", want, err.text);
    ty_error_clear(&err);
}

static void test_bad_lines_named(void **state)
{
    char want[256];
    (void)state;

    snprintf(want, sizeof(want), "%s:3: malformed CSV", path_in("bad.csv"));
    expect_bad("a,b,c\n# c\n\"tok,user,uid\n", want);
    snprintf(want, sizeof(want), "%s:2: want token,user,uid", path_in("bad.csv"));
    expect_bad("a,b,c\ntoken-only,user\n", want);
    snprintf(want, sizeof(want), "%s:1: want token,user,uid", path_in("bad.csv"));
    expect_bad("a,b,c,\"g\",extra\n", want);
    snprintf(want, sizeof(want), "%s:1: the token is empty", path_in("bad.csv"));
    expect_bad(",user,uid\n", want);
    snprintf(want, sizeof(want), "%s:2: the user name is empty", path_in("bad.csv"));
    expect_bad("a,b,c\nt2, ,uid\n", want);
    snprintf(want, sizeof(want), "%s:1: malformed CSV", path_in("bad.csv"));
    expect_bad("\"tok\"x,user,uid\n", want);
    expect_bad("a,b,c\n\"t w\",user,uid\n", "a blank or control character");
    snprintf(want, sizeof(want), "cannot read token file %s", path_in("absent.csv"));
    {
        ty_error err;
        ty_error_init(&err);
        assert_null(authn_of(path_in("absent.csv"), NULL, -1, &err));
        assert_non_null(strstr(err.text, want));
        ty_error_clear(&err);
    }
}

static void test_duplicate_tokens(void **state)
{
    ty_error err;
    char want[512];
    (void)state;

    snprintf(want, sizeof(want), "%s:3: the token is given twice (also at %s:1)",
             path_in("bad.csv"), path_in("bad.csv"));
    expect_bad("same,a,1\nother,b,2\nsame,c,3\n", want);
    /* across the admin file and --token-auth-file */
    ty_error_init(&err);
    write_text(path_in("admin.csv"), "shared,admin,admin,system:masters\n");
    write_text(path_in("users.csv"), "x,y,z\nshared,eve,e\n");
    assert_null(authn_of(path_in("users.csv"), path_in("admin.csv"), -1, &err));
    snprintf(want, sizeof(want), "%s:2: the token is given twice (also at %s:1)",
             path_in("users.csv"), path_in("admin.csv"));
    assert_non_null(strstr(err.text, want));
    ty_error_clear(&err);
}

/* True once authn says token is (or is not) known, within 60 s. */
static bool token_becomes(ty_authn *a, const char *token, bool known)
{
    int64_t end = ty_now_ms() + 60000;
    while (ty_now_ms() < end) {
        ty_user *u = NULL;
        ty_error err;
        ty_error_init(&err);
        int rc = authn_token(a, token, &u, &err);
        userinfo_free(u);
        ty_error_clear(&err);
        if ((rc == 0) == known)
            return true;
        usleep(20000);
    }
    return false;
}

static void test_reload_on_change(void **state)
{
    ty_error err;
    ty_authn *a;
    (void)state;

    ty_error_init(&err);
    write_text(path_in("admin.csv"), "admintok,admin,admin,system:masters\n");
    write_text(path_in("users.csv"), "old,u,1\n");
    a = authn_of(path_in("users.csv"), path_in("admin.csv"), 20, &err);
    assert_non_null(a);
    assert_true(token_becomes(a, "old", true));
    /* an appended user (the admin file) and a replaced one (the other) */
    write_text(path_in("admin.csv"), "admintok,admin,admin,system:masters\nnewtok,new,2\n");
    write_text(path_in("users.csv"), "fresh,u,1\n");
    assert_true(token_becomes(a, "newtok", true));
    assert_true(token_becomes(a, "fresh", true));
    assert_true(token_becomes(a, "old", false));
    /* a file that no longer parses: the tokens read before stay */
    write_text(path_in("users.csv"), "fresh,u,1\n\"broken\n");
    /* read now rather than waiting on the reload thread: refused, table kept */
    ty_error rerr;
    ty_error_init(&rerr);
    assert_int_equal(authn_reload(a, &rerr), -1);
    ty_error_clear(&rerr);
    assert_true(token_becomes(a, "fresh", true));
    assert_true(token_becomes(a, "admintok", true));
    /* and one fixed again is read */
    write_text(path_in("users.csv"), "fixed,u,1\n");
    assert_true(token_becomes(a, "fixed", true));
    /* authn_reload reports what the thread only logs */
    write_text(path_in("users.csv"), "x\n");
    assert_int_equal(authn_reload(a, &err), -1);
    assert_non_null(strstr(err.text, ":1: want token,user,uid"));
    authn_free(a);
    ty_error_clear(&err);
}

/* ---- certificates ------------------------------------------------------ */

typedef struct pair {
    gnutls_x509_crt_t crt;
    gnutls_x509_privkey_t key;
} pair;

static void pair_free(pair *p)
{
    gnutls_x509_crt_deinit(p->crt);
    gnutls_x509_privkey_deinit(p->key);
}

static void import_pair(const char *cert_path, const char *key_path, pair *p)
{
    char *c, *k;
    size_t cl, kl;
    ty_error err;
    ty_error_init(&err);
    assert_int_equal(tls_read_file(cert_path, "cert", TLS_FILE_MAX, &c, &cl, &err), 0);
    assert_int_equal(tls_read_file(key_path, "key", TLS_FILE_MAX, &k, &kl, &err), 0);
    gnutls_datum_t dc = {(unsigned char *)c, (unsigned)cl}, dk = {(unsigned char *)k,
                                                                  (unsigned)kl};
    assert_int_equal(gnutls_x509_crt_init(&p->crt), 0);
    assert_int_equal(gnutls_x509_privkey_init(&p->key), 0);
    assert_int_equal(gnutls_x509_crt_import(p->crt, &dc, GNUTLS_X509_FMT_PEM), 0);
    assert_int_equal(gnutls_x509_privkey_import2(p->key, &dk, GNUTLS_X509_FMT_PEM, NULL, 0), 0);
    free(c);
    free(k);
}

/* A client certificate for cn in the organizations orgs (NULL-ended),
 * signed by signer (NULL: by itself); PEM of both into cert and key
 * (gnutls_free them), DER into der when not NULL. */
static void make_client(const char *cn, const char *const *orgs, const pair *signer,
                        gnutls_datum_t *cert, gnutls_datum_t *key, gnutls_datum_t *der)
{
    pair p;
    unsigned char serial[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    time_t now = time(NULL);

    assert_int_equal(gnutls_x509_privkey_init(&p.key), 0);
    assert_int_equal(gnutls_x509_privkey_generate(p.key, GNUTLS_PK_ECDSA,
                                                  GNUTLS_CURVE_TO_BITS(
                                                      GNUTLS_ECC_CURVE_SECP256R1),
                                                  0),
                     0);
    assert_int_equal(gnutls_x509_crt_init(&p.crt), 0);
    gnutls_x509_crt_set_version(p.crt, 3);
    gnutls_x509_crt_set_serial(p.crt, serial, sizeof(serial));
    gnutls_x509_crt_set_activation_time(p.crt, now - 3600);
    gnutls_x509_crt_set_expiration_time(p.crt, now + 3600);
    gnutls_x509_crt_set_dn_by_oid(p.crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                  (unsigned)strlen(cn));
    for (size_t i = 0; orgs && orgs[i]; i++)
        gnutls_x509_crt_set_dn_by_oid(p.crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, orgs[i],
                                      (unsigned)strlen(orgs[i]));
    gnutls_x509_crt_set_key(p.crt, p.key);
    gnutls_x509_crt_set_key_purpose_oid(p.crt, GNUTLS_KP_TLS_WWW_CLIENT, 0);
    assert_int_equal(gnutls_x509_crt_sign2(p.crt, signer ? signer->crt : p.crt,
                                           signer ? signer->key : p.key, GNUTLS_DIG_SHA256, 0),
                     0);
    if (cert)
        assert_int_equal(gnutls_x509_crt_export2(p.crt, GNUTLS_X509_FMT_PEM, cert), 0);
    if (key)
        assert_int_equal(gnutls_x509_privkey_export2_pkcs8(p.key, GNUTLS_X509_FMT_PEM, NULL,
                                                           GNUTLS_PKCS_PLAIN, key),
                         0);
    if (der)
        assert_int_equal(gnutls_x509_crt_export2(p.crt, GNUTLS_X509_FMT_DER, der), 0);
    pair_free(&p);
}

static void test_cert_user(void **state)
{
    static const char *const orgs[] = {"system:masters", "team-a", NULL};
    gnutls_datum_t der;
    ty_user *u = NULL;
    ty_error err;
    (void)state;

    ty_error_init(&err);
    make_client("alice", orgs, NULL, NULL, NULL, &der);
    assert_int_equal(authn_cert_user(der.data, der.size, &u, &err), 0);
    assert_string_equal(u->name, "alice");
    assert_true(userinfo_in_group(u, "system:masters"));
    assert_true(userinfo_in_group(u, "team-a"));
    assert_true(userinfo_in_group(u, USERINFO_AUTHENTICATED));
    assert_int_equal(u->ngroups, 3);
    userinfo_free(u);
    gnutls_free(der.data);
    make_client("", NULL, NULL, NULL, NULL, &der);
    assert_int_equal(authn_cert_user(der.data, der.size, &u, &err), -1);
    assert_int_equal(err.code, TY_EUNAUTH);
    gnutls_free(der.data);
    assert_int_equal(authn_cert_user("junk", 4, &u, &err), -1);
    ty_error_clear(&err);
}

static void test_pki_made_once(void **state)
{
    tls_pem a, b;
    bool made;
    ty_error err;
    struct stat st;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(tls_ensure_pki(tmpdir, &a, &made, &err), 0);
    assert_true(made);
    assert_int_equal(stat(path_in("pki/ca.key"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(path_in("pki/apiserver.key"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(tls_ensure_pki(tmpdir, &b, &made, &err), 0);
    assert_false(made);
    assert_string_equal(a.cert, b.cert); /* reused, not made again */
    tls_pem_free(&b);
    /* the given-pair reader takes it; a key of another pair is refused */
    assert_int_equal(tls_load_pair(path_in("pki/apiserver.crt"), path_in("pki/apiserver.key"),
                                   &b, &err),
                     0);
    tls_pem_free(&b);
    assert_int_equal(tls_load_pair(path_in("pki/apiserver.crt"), path_in("pki/ca.key"), &b,
                                   &err),
                     -1);
    assert_non_null(strstr(err.text, "is not the key of --tls-cert-file"));
    assert_int_equal(tls_load_ca(path_in("pki/ca.key"), &b.cert, &err), -1);
    assert_non_null(strstr(err.text, "--client-ca-file"));
    assert_non_null(strstr(err.text, path_in("pki/ca.key")));
    tls_pem_free(&a);
    /* a damaged CA is named, never replaced */
    write_text(path_in("pki/ca.crt"), "-----BEGIN CERTIFICATE-----\nAAAA\n");
    assert_int_equal(tls_ensure_pki(tmpdir, &a, &made, &err), -1);
    assert_non_null(strstr(err.text, path_in("pki/ca.crt")));
    ty_error_clear(&err);
}

/* ---- the whole path ---------------------------------------------------- */

static long get_status(ty_client *cl, const char *path)
{
    client_resp resp;
    ty_error err;
    long st;
    ty_error_init(&err);
    assert_int_equal(client_request(cl, "GET", path, NULL, NULL, 0, NULL, &resp, &err), 0);
    st = resp.status;
    client_resp_free(&resp);
    ty_error_clear(&err);
    return st;
}

static void test_tls_server(void **state)
{
    static const char *const masters[] = {"system:masters", NULL};
    ty_error err;
    tls_pem pem;
    char url[64], *ca_pem;
    ty_store *store;
    ty_server *srv;
    ty_authn *a;
    pair ca;
    gnutls_datum_t cc, ck, oc, ok;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(tls_ensure_pki(tmpdir, &pem, NULL, &err), 0);
    import_pair(path_in("pki/ca.crt"), path_in("pki/ca.key"), &ca);
    assert_int_equal(tls_load_ca(path_in("pki/ca.crt"), &ca_pem, &err), 0);
    write_text(path_in("admin.csv"), "secret,admin,admin,system:masters\n");
    authn_opts ao = {.admin_token_file = path_in("admin.csv"), .client_certs = true,
                     .reload_ms = -1};
    assert_non_null(a = authn_new(&ao, &err));
    assert_non_null(store = store_open(tmpdir, &err));
    server_opts so = {.address = "127.0.0.1", .data_dir = tmpdir, .authn = a,
                      .tls_cert_pem = pem.cert, .tls_key_pem = pem.key,
                      .client_ca_pem = ca_pem};
    srv = server_start(store, &so, &err);
    if (!srv)
        fail_msg("server_start: %s", err.text);
    server_url(srv, url, sizeof(url));
    assert_non_null(strstr(url, "https://127.0.0.1:"));

    kc_http_opts o = {.server = url, .ca_file = path_in("pki/ca.crt")};
    ty_client *anon = client_new_opts(&o, &err);
    assert_non_null(anon);
    assert_int_equal(get_status(anon, "/api/v1/namespaces"), 401);
    assert_int_equal(get_status(anon, "/healthz"), 200);
    assert_int_equal(get_status(anon, "/version"), 200);
    /* a write without credentials: 401 from its headers, nothing stored */
    {
        client_resp resp;
        const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                         "\"metadata\":{\"name\":\"anon\"}}";
        assert_int_equal(client_request(anon, "POST", "/api/v1/namespaces/default/configmaps",
                                        "application/json", cm, strlen(cm), NULL, &resp, &err),
                         0);
        assert_int_equal(resp.status, 401);
        assert_non_null(strstr(resp.body.data, "\"reason\":\"Unauthorized\""));
        client_resp_free(&resp);
    }
    o.token = "wrong";
    ty_client *bogus = client_new_opts(&o, &err);
    assert_int_equal(get_status(bogus, "/healthz"), 401); /* bad credentials: never anonymous */
    o.token = "secret";
    ty_client *admin = client_new_opts(&o, &err);
    assert_int_equal(get_status(admin, "/api/v1/namespaces"), 200);
    assert_int_equal(get_status(admin, "/api/v1/namespaces"), 200); /* kept-alive */
    assert_int_equal(get_status(admin, "/api/v1/namespaces/default/configmaps/anon"), 404);
    /* a client certificate of the CA, and one of nobody's */
    make_client("alice", masters, &ca, &cc, &ck, NULL);
    make_client("mallory", masters, NULL, &oc, &ok, NULL);
    kc_http_opts oa = {.server = url, .ca_file = path_in("pki/ca.crt"), .cert_data = cc.data,
                       .cert_len = cc.size, .key_data = ck.data, .key_len = ck.size};
    ty_client *alice = client_new_opts(&oa, &err);
    assert_int_equal(get_status(alice, "/api/v1/namespaces"), 200);
    assert_int_equal(get_status(alice, "/api/v1/pods"), 200); /* the connection's verdict kept */
    oa.cert_data = oc.data;
    oa.cert_len = oc.size;
    oa.key_data = ok.data;
    oa.key_len = ok.size;
    ty_client *mallory = client_new_opts(&oa, &err);
    assert_int_equal(get_status(mallory, "/api/v1/namespaces"), 401);
    /* ... unless a good token comes with it */
    oa.token = "secret";
    ty_client *both = client_new_opts(&oa, &err);
    assert_int_equal(get_status(both, "/api/v1/namespaces"), 200);
    /* a client that does not trust the CA never gets as far */
    kc_http_opts on = {.server = url, .token = "secret"};
    ty_client *untrusting = client_new_opts(&on, &err);
    client_resp resp;
    assert_int_equal(client_request(untrusting, "GET", "/healthz", NULL, NULL, 0, NULL, &resp,
                                    &err),
                     -1);
    client_resp_free(&resp);

    client_free(anon);
    client_free(bogus);
    client_free(admin);
    client_free(alice);
    client_free(mallory);
    client_free(both);
    client_free(untrusting);
    gnutls_free(cc.data);
    gnutls_free(ck.data);
    gnutls_free(oc.data);
    gnutls_free(ok.data);
    server_stop(srv);
    store_close(store);
    authn_free(a);
    pair_free(&ca);
    free(ca_pem);
    tls_pem_free(&pem);
    ty_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_token_csv, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_bad_lines_named, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_duplicate_tokens, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_reload_on_change, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_cert_user, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_pki_made_once, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_tls_server, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
