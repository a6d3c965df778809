/* server_security.c - see server_security.h. */
#include <stdio.h>

#include "cli/server_security.h"
#include "server/authn.h"
#include "server/authz.h"

int security_flag(int c, const char *arg, security_flags *sf)
{
    switch (c) {
    case SECF_TOKEN_AUTH_FILE: sf->token_auth_file = arg; return 0;
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

void security_teardown(security_state *st)
{
    authn_free(st->authn);
    st->authn = NULL;
}
