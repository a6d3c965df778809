/* backend.c - the runtime backends built in, and calls through an instance
 * (see backend.h). */
#include <string.h>

#include "api/mpi_agent.h"
#include "runtime/backend.h"

static const rt_backend_ops *const builtin[] = {&rt_local_backend, &rt_sim_backend};

const rt_backend_ops *rt_backend_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(builtin) / sizeof(builtin[0]); i++)
        if (!strcmp(builtin[i]->name, name))
            return builtin[i];
    return NULL;
}

int rt_backend_start(rt_backend *b, const rt_backend_ops *ops, ty_kc *kc, const void *opts,
                     ty_error *err)
{
    b->ops = NULL;
    b->impl = NULL;
    if (!ops || !ops->start || !ops->stop)
        return ty_seterr(err, TY_EINVALID, "runtime: incomplete backend %s",
                         ops && ops->name ? ops->name : "(none)");
    /* Before anything runs: the controllers write this agent into the
     * ConfigMaps of MPI jobs from now on. */
    if (ops->mpi_agent)
        mpi_agent_register(ops->mpi_agent);
    if (!(b->impl = ops->start(kc, opts, err)))
        return -1;
    b->ops = ops;
    return 0;
}

void rt_backend_stop(rt_backend *b)
{
    if (!b || !b->ops)
        return;
    b->ops->stop(b->impl);
    b->ops = NULL;
    b->impl = NULL;
}

rt_backend *rt_backend_for_node(rt_backend *const *bs, size_t n, const char *node)
{
    for (size_t i = 0; node && i < n; i++)
        if (bs[i] && bs[i]->ops && bs[i]->ops->owns_node &&
            bs[i]->ops->owns_node(bs[i]->impl, node))
            return bs[i];
    return NULL;
}

rt_log *rt_backend_log_open(const rt_backend *b, const char *ns, const char *pod,
                            const char *container, bool previous, long tail_lines,
                            ty_error *err)
{
    if (!b || !b->ops || !b->ops->log_open) {
        ty_seterr(err, TY_ENOTFOUND, "runtime %s keeps no logs",
                  b && b->ops ? b->ops->name : "(none)");
        return NULL;
    }
    return b->ops->log_open(b->impl, ns, pod, container, previous, tail_lines, err);
}

char *rt_backend_log_gets(const rt_backend *b, rt_log *l, char *buf, int len)
{
    return b->ops->log_gets(l, buf, len);
}

bool rt_backend_log_rotated(const rt_backend *b, rt_log *l)
{
    return b->ops->log_rotated ? b->ops->log_rotated(l) : false;
}

void rt_backend_log_close(const rt_backend *b, rt_log *l)
{
    if (l)
        b->ops->log_close(l);
}

json_t *rt_backend_log_containers(const rt_backend *b, const char *ns, const char *pod)
{
    if (!b || !b->ops || !b->ops->log_containers)
        return NULL;
    return b->ops->log_containers(b->impl, ns, pod);
}

json_t *rt_backend_log_retained(const rt_backend *b, const char *ns)
{
    if (!b || !b->ops || !b->ops->log_retained)
        return NULL;
    return b->ops->log_retained(b->impl, ns);
}
