/* userinfo.c - see userinfo.h. */
#include <stdlib.h>
#include <string.h>

#include "api/userinfo.h"

ty_user *userinfo_new(const char *name, const char *uid, const char *const *groups,
                      size_t ngroups)
{
    ty_user *u = calloc(1, sizeof(*u));
    bool has_auth = false;

    if (!u)
        return NULL;
    if (ngroups > USERINFO_MAX_GROUPS)
        ngroups = USERINFO_MAX_GROUPS;
    u->name = strdup(name ? name : "");
    u->uid = uid && *uid ? strdup(uid) : NULL;
    u->groups = calloc(ngroups + 1, sizeof(char *));
    if (!u->name || (uid && *uid && !u->uid) || !u->groups) {
        userinfo_free(u);
        return NULL;
    }
    for (size_t i = 0; i < ngroups; i++) {
        if (!(u->groups[u->ngroups] = strdup(groups[i]))) {
            userinfo_free(u);
            return NULL;
        }
        if (strcmp(groups[i], USERINFO_AUTHENTICATED) == 0 ||
            strcmp(groups[i], USERINFO_UNAUTHENTICATED) == 0)
            has_auth = true; /* either way, said already */
        u->ngroups++;
    }
    /* As kube-apiserver's authenticated-group adder: not to the anonymous
     * user, nor to one already in either group (a copy of the anonymous
     * user stays unauthenticated). */
    if (strcmp(u->name, USERINFO_ANONYMOUS) != 0 && !has_auth &&
        !(u->groups[u->ngroups++] = strdup(USERINFO_AUTHENTICATED))) {
        userinfo_free(u);
        return NULL;
    }
    return u;
}

ty_user *userinfo_dup(const ty_user *u)
{
    return u ? userinfo_new(u->name, u->uid, (const char *const *)u->groups, u->ngroups)
             : NULL;
}

void userinfo_free(ty_user *u)
{
    if (!u)
        return;
    for (size_t i = 0; u->groups && i < u->ngroups; i++)
        free(u->groups[i]);
    free(u->groups);
    free(u->uid);
    free(u->name);
    free(u);
}

bool userinfo_in_group(const ty_user *u, const char *group)
{
    for (size_t i = 0; u && i < u->ngroups; i++)
        if (strcmp(u->groups[i], group) == 0)
            return true;
    return false;
}

json_t *userinfo_to_json(const ty_user *u)
{
    json_t *o = json_object(), *g = json_array();

    if (!o || !g)
        goto fail;
    if (json_object_set_new(o, "username", json_string(u->name)) < 0)
        goto fail;
    if (u->uid && json_object_set_new(o, "uid", json_string(u->uid)) < 0)
        goto fail;
    for (size_t i = 0; i < u->ngroups; i++)
        if (json_array_append_new(g, json_string(u->groups[i])) < 0)
            goto fail;
    if (json_object_set_new(o, "groups", g) < 0) {
        g = NULL;
        goto fail;
    }
    return o;
fail:
    json_decref(g);
    json_decref(o);
    return NULL;
}
