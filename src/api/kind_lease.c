/* kind_lease.c - coordination.k8s.io/v1 Lease: what leader elections
 * (client/leader.h, client-go's leaderelection) hold and renew. Validation
 * as kube-apiserver's pkg/apis/coordination/validation (its field paths and
 * wording); kubectl's columns NAME, HOLDER, AGE.
 *
 * acquireTime and renewTime are metav1.MicroTime: RFC 3339 with exactly six
 * digits of fraction. kube-apiserver refuses any other form as it decodes
 * (400); here the kind's validation refuses it (422 with the field's path,
 * docs/compatibility.md), and stores a valid one in UTC, as kube-apiserver
 * writes it back. */
#include <stdio.h>
#include <string.h>

#include "api/kind_core_int.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/timeutil.h"

static const char *const lease_strategies[] = {"OldestEmulationVersion", NULL};
static const char *const lease_times[] = {"acquireTime", "renewTime", NULL};

/* The layout kube-apiserver parses a MicroTime with: seconds, a '.', six
 * digits, then "Z" or an offset (ty_time_parse checks the rest). */
static int parse_micro(const char *s, struct timespec *out)
{
    if (!s || strlen(s) < 27 || s[19] != '.')
        return -1;
    for (int i = 20; i < 26; i++)
        if (s[i] < '0' || s[i] > '9')
            return -1;
    if (s[26] != 'Z' && s[26] != '+' && s[26] != '-')
        return -1;
    return ty_time_parse_ts(s, out);
}

/* A valid time is written back in UTC ("+02:00" becomes "Z"). */
static void lease_defaults(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");

    for (size_t i = 0; json_is_object(spec) && lease_times[i]; i++) {
        const char *s = meta_str(spec, lease_times[i]);
        struct timespec ts;
        char buf[TY_TIME_FRAC_LEN];
        if (s && parse_micro(s, &ts) == 0) {
            ty_time_format_frac(ts, 6, buf, sizeof(buf));
            if (strcmp(buf, s) != 0)
                json_object_set_new(spec, lease_times[i], json_string(buf));
        }
    }
}

/* spec.strategy: a name Kubernetes defines, or a qualified name of one's
 * own ("example.com/mine"). Upstream names the field twice in the path of
 * a strategy it refuses (spec.strategy.strategy); so does this. */
static void check_strategy(const json_t *v, ty_error *err)
{
    const char *s = json_string_value(v);
    const char *field = "spec.strategy.strategy";

    if (!s)
        return; /* a mistyped one is decoding's */
    if (!strchr(s, '/')) {
        if (!in_set(s, lease_strategies))
            meta_not_supported(err, field, v, lease_strategies);
        return;
    }
    meta_check_qualified_name(field, s, err);
}

static int lease_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const json_t *spec = json_object_get(obj, "spec"), *v;
    const char *strategy = meta_str(spec, "strategy");
    char f[PATH_LEN];

    (void)old;
    v = json_object_get(spec, "leaseDurationSeconds");
    if (json_is_integer(v) && json_integer_value(v) <= 0)
        meta_invalid(err, "spec.leaseDurationSeconds", v, "must be greater than 0");
    v = json_object_get(spec, "leaseTransitions");
    if (json_is_integer(v) && json_integer_value(v) < 0)
        meta_invalid(err, "spec.leaseTransitions", v, "must be greater than or equal to 0");
    if ((v = json_object_get(spec, "strategy")) && !json_is_null(v))
        check_strategy(v, err);
    if (json_string_length(json_object_get(spec, "preferredHolder")) > 0 &&
        (!strategy || !*strategy))
        meta_forbidden(err, "spec.preferredHolder",
                       "may only be specified if `strategy` is defined");
    for (size_t i = 0; lease_times[i]; i++) {
        struct timespec ts;
        v = json_object_get(spec, lease_times[i]);
        if (!json_is_string(v) || parse_micro(json_string_value(v), &ts) == 0)
            continue;
        snprintf(f, sizeof(f), "spec.%s", lease_times[i]);
        meta_invalid(err, f, v, "must be an RFC 3339 time with six digits of fraction "
                     "(2006-01-02T15:04:05.000000Z07:00)");
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void lease_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *holder = meta_str(json_object_get(obj, "spec"), "holderIdentity");

    json_array_append_new(cells, json_string(holder ? holder : ""));
    age_cell(obj, now, cells);
}

static const api_column lease_columns[] = {
    {"Holder", "string", "", "holderIdentity contains the identity of the holder of a current "
     "lease. If Coordinated Leader Election is used, the holder identity must be equal to the "
     "elected LeaseCandidate.metadata.name field.", 0},
    AGE_COLUMN,
};
static const api_field lease_spec_fields[] = {
    API_FIELD("holderIdentity", API_T_STRING),
    API_FIELD("leaseDurationSeconds", API_T_INT32),
    API_FIELD("acquireTime", API_T_STRING),
    API_FIELD("renewTime", API_T_STRING),
    API_FIELD("leaseTransitions", API_T_INT32),
    API_FIELD("preferredHolder", API_T_STRING),
    API_FIELD("strategy", API_T_STRING),
};
static const api_schema lease_spec_schema = {
    .fields = lease_spec_fields, .nfields = API_NFIELDS(lease_spec_fields),
    .go_name = "LeaseSpec",
};
static const api_field lease_fields[] = {
    API_OBJECT("spec", &lease_spec_schema),
};
static const api_schema lease_schema = API_SCHEMA(lease_fields);

const api_resource api_lease = {
    .group = "coordination.k8s.io", .version = "v1", .kind = "Lease",
    .list_kind = "LeaseList", .plural = "leases", .singular = "lease",
    .namespaced = true, .builtin = true,
    .apply_defaults = lease_defaults, .validate = lease_validate,
    .columns = lease_columns, .ncolumns = NCOLS(lease_columns),
    .row_cells = lease_cells, .schema = &lease_schema,
};
