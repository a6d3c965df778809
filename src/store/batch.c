/* batch.c - several writes at once (store_write_all, see store.h): a group
 * of requests queued one after another (commit.c), so that they share
 * transactions, one wake-up of the watchers and one thread hand-off. */
#include <stdlib.h>

#include "base/log.h"
#include "store/store_int.h"

static bool op_valid(store_op *op, const char *ns)
{
    if (op->kind == STORE_OP_MUTATE || op->kind == STORE_OP_DELETE)
        return true;
    if (op->text) {
        if (store_text_prepare(&op->text, &op->text_len, &op->meta_end, &op->err) < 0)
            return false;
        op->name = store_text_name(op->text, op->text_len);
        return true;
    }
    if (!json_is_object(op->obj)) {
        ty_seterr(&op->err, TY_EBADREQUEST, "object must be a JSON object");
        return false;
    }
    return store_init_create_meta(op->obj, ns, &op->err) == 0;
}

/* Records only, none with an argument to copy: nobody waits for them. */
static bool only_records(const store_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ops[i].kind != STORE_OP_RECORD || ops[i].arg)
            return false;
    return true;
}

size_t store_write_all(ty_store *s, store_op *ops, size_t n)
{
    write_req *reqs;
    size_t m = 0, failed = 0;

    if (n && only_records(ops, n)) {
        for (size_t i = 0; i < n; i++) {
            ty_error_init(&ops[i].err);
            ops[i].result = NULL;
            if (ops[i].text)
                store_create_async_text(s, ops[i].resource, ops[i].ns, ops[i].text,
                                        ops[i].text_len, ops[i].meta_end, ops[i].fn);
            else
                store_create_async(s, ops[i].resource, ops[i].ns, ops[i].obj, ops[i].fn, NULL,
                                   0);
            ops[i].obj = NULL;
            ops[i].text = NULL;
        }
        return 0;
    }
    reqs = n ? calloc(n, sizeof(*reqs)) : NULL;

    for (size_t i = 0; i < n; i++) {
        store_op *op = &ops[i];
        const char *ns = op->ns ? op->ns : "";
        ty_error_init(&op->err);
        op->result = NULL;
        if (!reqs) {
            ty_seterr(&op->err, TY_EINTERNAL, "out of memory");
            continue;
        }
        if (!op_valid(op, ns))
            continue;
        bool named = op->kind == STORE_OP_MUTATE || op->kind == STORE_OP_DELETE || op->text;
        reqs[m++] = (write_req){.kind = op->kind == STORE_OP_MUTATE   ? WR_MUTATE
                                        : op->kind == STORE_OP_DELETE ? WR_DELETE
                                                                      : WR_CREATE,
                                .resource = op->resource, .ns = ns,
                                .name = named ? op->name : NULL,
                                .obj = op->obj, .text = op->text, .text_len = op->text_len,
                                .rv_at = op->meta_end, .fn = op->fn, .arg = op->arg,
                                .dopts = op->dopts, .status_only = op->status_only,
                                .spec_top = op->spec_top, .arena = op->arena,
                                .light = op->light && op->status_only,
                                .err = &op->err};
        op->obj = NULL; /* the request owns it now */
        op->text = NULL;
    }
    commit_submit_all(s, reqs, m);
    for (size_t i = 0, k = 0; i < n; i++) {
        store_op *op = &ops[i];
        if (k < m && reqs[k].err == &op->err) { /* it was submitted */
            json_decref(reqs[k].obj);           /* still ours when it was not staged */
            free(reqs[k].text);
            op->result = reqs[k++].result;
        }
        json_decref(op->obj);
        op->obj = NULL;
        if (op->kind != STORE_OP_RECORD) {
            failed += op->result == NULL;
            continue;
        }
        if (!op->result)
            ty_debug("store: %s in \"%s\" not recorded: %s", op->resource, op->ns ? op->ns : "",
                     op->err.text);
        store_op_clear(op);
    }
    free(reqs);
    return failed;
}

void store_op_clear(store_op *op)
{
    store_obj_unref(op->result);
    op->result = NULL;
    json_decref(op->obj);
    op->obj = NULL;
    free(op->text);
    op->text = NULL;
    ty_error_clear(&op->err);
}

