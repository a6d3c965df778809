/* selector_names.c - Kubernetes' name checks (qualified names, label values,
 * DNS-1123 subdomains) with the messages kube-apiserver gives.
 *
 * The regular expressions are written out as loops; the messages still quote
 * them because that is what clients see from a real cluster.
 */
#include "model/selector.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define QNAME_MAX 63
#define LABEL_VALUE_MAX 63
#define DNS1123_SUBDOMAIN_MAX 253

#define QNAME_MSG                                                                         \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end " \
    "with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex "  \
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG                                                                      \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or "    \
    "'my_value', or '12345', regex used for validation is "                                 \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define DNS1123_MSG                                                                       \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, " \
    "'-' or '.', and must start and end with an alphanumeric character (e.g. "            \
    "'example.com', regex used for validation is "                                        \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* Appends one reason, "; "-separated as Kubernetes joins them. */
static void add_reason(char *why, size_t len, const char *prefix, const char *reason)
{
    if (!why || len == 0)
        return;
    size_t used = strlen(why);
    if (used >= len - 1)
        return;
    snprintf(why + used, len - used, "%s%s%s", used ? "; " : "", prefix, reason);
}

static bool is_alnum(char c)
{
    return isascii((unsigned char)c) && isalnum((unsigned char)c);
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..len). */
static bool name_chars_ok(const char *s, size_t len)
{
    if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

static bool dns1123_chars_ok(const char *s, size_t len)
{
    size_t start = 0;

    if (len == 0)
        return false;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.')
            continue;
        /* One dot-separated label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
        if (i == start)
            return false;
        for (size_t j = start; j < i; j++) {
            char c = s[j];
            bool lower_alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!lower_alnum && !(c == '-' && j != start && j != i - 1))
                return false;
        }
        start = i + 1;
    }
    return true;
}

static bool dns1123_check(const char *s, size_t len, char *why, size_t whylen,
                          const char *prefix)
{
    bool ok = true;
    char msg[64];

    if (len > DNS1123_SUBDOMAIN_MAX) {
        snprintf(msg, sizeof(msg), "must be no more than %d characters", DNS1123_SUBDOMAIN_MAX);
        add_reason(why, whylen, prefix, msg);
        ok = false;
    }
    if (!dns1123_chars_ok(s, len)) {
        add_reason(why, whylen, prefix, DNS1123_MSG);
        ok = false;
    }
    return ok;
}

bool dns1123_subdomain_valid(const char *s, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    return dns1123_check(s, strlen(s), why, len, "");
}

bool label_key_valid(const char *s, char *why, size_t len)
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    bool ok = true;
    char msg[64];

    if (why && len)
        why[0] = '\0';
    if (slash && strchr(slash + 1, '/')) {
        add_reason(why, len, "a qualified name ", QNAME_MSG
                   " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
        return false;
    }
    if (slash) {
        size_t plen = (size_t)(slash - s);
        if (plen == 0) {
            add_reason(why, len, "prefix part ", "must be non-empty");
            ok = false;
        } else if (!dns1123_check(s, plen, why, len, "prefix part ")) {
            ok = false;
        }
        name = slash + 1;
    }
    size_t nlen = strlen(name);
    if (nlen == 0) {
        add_reason(why, len, "name part ", "must be non-empty");
        ok = false;
    } else if (nlen > QNAME_MAX) {
        snprintf(msg, sizeof(msg), "must be no more than %d characters", QNAME_MAX);
        add_reason(why, len, "name part ", msg);
        ok = false;
    }
    if (!name_chars_ok(name, nlen)) {
        add_reason(why, len, "name part ", QNAME_MSG);
        ok = false;
    }
    return ok;
}

bool label_value_valid(const char *s, char *why, size_t len)
{
    size_t vlen = strlen(s);
    bool ok = true;
    char msg[64];

    if (why && len)
        why[0] = '\0';
    if (vlen > LABEL_VALUE_MAX) {
        snprintf(msg, sizeof(msg), "must be no more than %d characters", LABEL_VALUE_MAX);
        add_reason(why, len, "", msg);
        ok = false;
    }
    if (vlen > 0 && !name_chars_ok(s, vlen)) {
        add_reason(why, len, "", LABEL_VALUE_MSG);
        ok = false;
    }
    return ok;
}
