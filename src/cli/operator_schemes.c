/* operator_schemes.c - `trainyard operator --enable-scheme`: scheme names
 * (training-operator's, lower-case kinds, "volcano" and "trainjob") to the kinds the
 * operator runs. A file of its own, linked into the ty_cli library, so
 * that the unit tests reach it without the CLI's main (test_operator.c). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/kubeflow.h"
#include "cli/operator.h"

static const char *const volcano_scheme = "volcano";
static const char *const trainer_scheme = "trainjob";

static bool scheme_is(const kf_kind *k, const char *name, size_t len)
{
    return strlen(k->kind) == len && strncasecmp(k->kind, name, len) == 0;
}

/* "tfjob, pytorchjob, ..., volcano, trainjob": every scheme once, lower-case. */
static void known_schemes(char *buf, size_t size)
{
    size_t n, len;
    const kf_kind *const *all = kf_kinds(&n);

    *buf = '\0';
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup |= !strcmp(all[j]->kind, all[i]->kind);
        if (dup)
            continue;
        len = strlen(buf);
        snprintf(buf + len, size - len, "%s, ", all[i]->kind);
    }
    len = strlen(buf);
    snprintf(buf + len, size - len, "%s, %s", volcano_scheme, trainer_scheme);
    for (char *c = buf; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
}

int op_schemes_add(const char *list, uint64_t *kinds, bool *volcano, bool *trainer,
                   ty_error *err)
{
    size_t n;
    const kf_kind *const *all = kf_kinds(&n);
    uint64_t add_kinds = 0;
    bool add_volcano = false, add_trainer = false;
    const char *p = list;

    /* Every element is checked before anything is added: a list with one
     * bad name changes nothing. An empty element (",", a trailing comma, an
     * empty list) is a mistake as an unknown name is, not "nothing". */
    for (;;) {
        size_t len = strcspn(p, ","), tl;
        bool found = false;
        while (len && *p == ' ') {
            p++;
            len--;
        }
        tl = len;
        while (tl && p[tl - 1] == ' ')
            tl--;
        if (tl == strlen(volcano_scheme) && !strncasecmp(p, volcano_scheme, tl)) {
            add_volcano = found = true;
        } else if (tl == strlen(trainer_scheme) && !strncasecmp(p, trainer_scheme, tl)) {
            add_trainer = found = true;
        } else {
            for (size_t i = 0; i < n && i < 64; i++)
                if (scheme_is(all[i], p, tl)) {
                    add_kinds |= (uint64_t)1 << i;
                    found = true;
                }
        }
        if (!found) {
            char known[256];
            known_schemes(known, sizeof(known));
            if (!tl)
                ty_seterr(err, TY_EBADREQUEST, "empty scheme name: want %s", known);
            else
                ty_seterr(err, TY_EBADREQUEST, "unknown scheme \"%.*s\": want %s",
                          (int)(tl > 64 ? 64 : tl), p, known);
            return -1;
        }
        p += len;
        if (*p != ',')
            break;
        p++;
    }
    *kinds |= add_kinds;
    *volcano = *volcano || add_volcano;
    *trainer = *trainer || add_trainer;
    return 0;
}

void op_schemes_all(uint64_t *kinds, bool *volcano, bool *trainer)
{
    size_t n;

    kf_kinds(&n);
    *kinds = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    *volcano = true;
    *trainer = true;
}
