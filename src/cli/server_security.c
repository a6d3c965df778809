/* server_security.c - see server_security.h. */
#include <stdio.h>
#include <string.h>

#include "cli/server_security.h"
#include "server/authn.h"
#include "server/authz.h"

int security_flag(int c, const char *arg, security_flags *sf)
{
    switch (c) {
    case SECF_TOKEN_AUTH_FILE: sf->token_auth_file = arg; return 0;
    case SECF_AUTHORIZATION_MODE:
        if (strcmp(arg, "RBAC") == 0 || strcmp(arg, "AlwaysAllow") == 0) {
            sf->always_allow = strcmp(arg, "AlwaysAllow") == 0;
            return 0;
        }
        fprintf(stderr, "error: --authorization-mode: unknown mode \"%s\": want RBAC or "
                "AlwaysAllow\n", arg);
        return -1;
    default: fprintf(stderr, "error: unknown flag\n"); return -1;
    }
}

int security_setup(const security_flags *sf, const char *data_dir, security_state *st,
                   server_opts *so, ty_error *err)
{
    (void)data_dir;
    if (sf->token_auth_file) {
        authn_opts ao = {.token_auth_file = sf->token_auth_file};
        if (!(st->authn = authn_new(&ao, err)))
            return -1;
    }
    so->authn = st->authn;
    so->authz = st->authz;
    return 0;
}

int security_start(const security_flags *sf, security_state *st, ty_store *store,
                   server_opts *so, ty_error *err)
{
    if (!sf->always_allow && !(st->authz = authz_new(store, err)))
        return -1;
    so->authz = st->authz;
    return 0;
}

void security_teardown(security_state *st)
{
    authz_free(st->authz);
    st->authz = NULL;
    authn_free(st->authn);
    st->authn = NULL;
}
