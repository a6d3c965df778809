/* yaml_dump.c - JSON to block YAML in the layout kubectl prints.
 *
 * Each string gets the plainest style that reads back as the same string, in
 * any YAML reader and not only ours: plain when safe; double quotes when the
 * plain text would read as another type (a YAML 1.1 reader takes "y", "on",
 * "0755" or "12:30" for non-strings) or when escapes are needed; single quotes
 * when only YAML's indicator characters are in the way; a literal block for
 * multi-line text.
 */
#include "model/yaml.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The longest implicit key written as one ("key: value"); YAML allows 1024
 * characters, counted after quoting. */
#define YAML_KEY_MAX 1000

typedef struct strbuf {
    char *data;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_add(strbuf *sb, const char *s, size_t n)
{
    if (sb->failed)
        return;
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap < sb->len + n + 1)
            cap *= 2;
        char *grown = realloc(sb->data, cap);
        if (!grown) {
            sb->failed = true;
            return;
        }
        sb->data = grown;
        sb->cap = cap;
    }
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

static void sb_str(strbuf *sb, const char *s)
{
    sb_add(sb, s, strlen(s));
}

static void sb_pad(strbuf *sb, int n)
{
    static const char spaces[] = "                                ";
    while (n > 0) {
        int k = n < 32 ? n : 32;
        sb_add(sb, spaces, (size_t)k);
        n -= k;
    }
}

/* ---- how a string must be written ------------------------------------- */

typedef enum style { STYLE_PLAIN, STYLE_SINGLE, STYLE_DOUBLE, STYLE_LITERAL } style;

/* The Unicode characters YAML treats as line breaks or that a reader may
 * drop (BOM); returns their length in bytes at s, 0 if none. */
static size_t special_unicode(const unsigned char *s, size_t left)
{
    if (left >= 2 && s[0] == 0xC2 && s[1] == 0x85)
        return 2;
    if (left >= 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9))
        return 3;
    if (left >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
        return 3;
    return 0;
}

static bool digits_only(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return n > 0;
}

/* [-+]?(0x[0-9a-fA-F]+|0o[0-7]+|0b[01]+|[0-9]+): every form a YAML 1.1 or
 * 1.2 reader may take for an integer ("08" included, which Go's reader
 * takes for the float 8). */
static bool int_like(const char *p)
{
    const char *set = "0123456789";

    if (*p == '-' || *p == '+')
        p++;
    if (p[0] == '0' && p[1] && strchr("xXoObB", p[1])) {
        set = strchr("xX", p[1]) ? "0123456789abcdefABCDEF" : strchr("oO", p[1]) ? "01234567"
                                                                                  : "01";
        p += 2;
    }
    if (!*p)
        return false;
    for (; *p; p++)
        if (!strchr(set, *p))
            return false;
    return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool float_like(const char *p)
{
    size_t before = 0, after = 0;

    if (*p == '-' || *p == '+')
        p++;
    while (isdigit((unsigned char)*p))
        p++, before++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            after++;
    if (!before && !after)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return !*p;
}

/* YAML 1.1 base 60: [-+]?[0-9][0-9]*(:[0-5]?[0-9])+(\.[0-9]*)? */
static bool sexagesimal_like(const char *p)
{
    int groups = 0;

    if (*p == '-' || *p == '+')
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    while (*p == ':') {
        p++;
        int n = 0;
        while (isdigit((unsigned char)*p))
            p++, n++;
        if (n < 1 || n > 2)
            return false;
        groups++;
    }
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            ;
    return groups > 0 && !*p;
}

/* Text that some YAML reader would resolve to a non-string when plain. */
static bool reads_as_other_type(const char *s, size_t len)
{
    static const char *const words[] = {"~",    "null", "true", "false", "yes", "no", "on",
                                        "off",  "y",    "n",    ".inf",  "-.inf", "+.inf",
                                        ".nan", "<<"};
    char t[128];
    size_t n = 0;

    if (len == 0)
        return true;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcasecmp(s, words[i]))
            return true;
    if (len >= sizeof(t))
        return false;
    /* Readers ignore '_' inside numbers. */
    for (size_t i = 0; i < len; i++)
        if (s[i] != '_')
            t[n++] = s[i];
    t[n] = '\0';
    if (int_like(t) || float_like(t) || sexagesimal_like(t))
        return true;
    /* Timestamps such as 2024-01-31 or 2024-01-31T10:00:00Z. */
    return len >= 8 && digits_only(s, 4) && s[4] == '-' && isdigit((unsigned char)s[5]);
}

static bool is_indicator(char c)
{
    return strchr("-?:,[]{}#&*!|>'\"%@`", c) != NULL;
}

/* Plain text that a reader would not take back as the same string. */
static bool plain_unsafe(const char *s, size_t len)
{
    if (s[0] == ' ' || s[len - 1] == ' ')
        return true;
    if (is_indicator(s[0])) {
        /* "-x", "?x", ":x" are fine; a lone indicator or one before a space
         * starts YAML syntax. */
        bool ok = (s[0] == '-' || s[0] == '?' || s[0] == ':') && len > 1 && s[1] != ' ';
        if (!ok)
            return true;
    }
    if (!strncmp(s, "---", 3) || !strncmp(s, "...", 3) || s[len - 1] == ':')
        return true;
    return strstr(s, ": ") || strstr(s, " #");
}

static style string_style(const char *s, size_t len, bool allow_block)
{
    bool newline = false, needs_escape = false, trailing_space_before_newline = false;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') {
            newline = true;
            if (i > 0 && s[i - 1] == ' ')
                trailing_space_before_newline = true;
        } else if (c < 0x20 || c == 0x7F || special_unicode((const unsigned char *)s + i,
                                                              len - i)) {
            needs_escape = true;
        }
    }
    if (strlen(s) != len)
        needs_escape = true; /* embedded NUL */
    if (needs_escape)
        return STYLE_DOUBLE;
    if (newline) {
        bool block_ok = allow_block && s[0] != ' ' && s[0] != '\n' &&
                        !trailing_space_before_newline && s[len - 1] != ' ';
        return block_ok ? STYLE_LITERAL : STYLE_DOUBLE;
    }
    if (reads_as_other_type(s, len))
        return STYLE_DOUBLE;
    return plain_unsafe(s, len) ? STYLE_SINGLE : STYLE_PLAIN;
}

/* ---- writing scalars -------------------------------------------------- */

static void write_double_quoted(strbuf *sb, const char *s, size_t len)
{
    char esc[8];

    sb_add(sb, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t uni = special_unicode((const unsigned char *)s + i, len - i);
        if (uni) {
            sb_str(sb, uni == 2 ? "\\N" : c == 0xEF ? "\\uFEFF" : s[i + 2] == (char)0xA8 ? "\\L"
                                                                                    : "\\P");
            i += uni - 1;
            continue;
        }
        switch (c) {
        case '"': sb_str(sb, "\\\""); break;
        case '\\': sb_str(sb, "\\\\"); break;
        case '\n': sb_str(sb, "\\n"); break;
        case '\t': sb_str(sb, "\\t"); break;
        case '\r': sb_str(sb, "\\r"); break;
        case '\0': sb_str(sb, "\\0"); break;
        default:
            if (c < 0x20 || c == 0x7F) {
                snprintf(esc, sizeof(esc), "\\x%02X", c);
                sb_str(sb, esc);
            } else {
                sb_add(sb, (const char *)&s[i], 1);
            }
        }
    }
    sb_add(sb, "\"", 1);
}

static void write_single_quoted(strbuf *sb, const char *s, size_t len)
{
    sb_add(sb, "'", 1);
    for (size_t i = 0; i < len; i++)
        sb_add(sb, s[i] == '\'' ? "''" : &s[i], s[i] == '\'' ? 2 : 1);
    sb_add(sb, "'", 1);
}

/* "|" keeps one final newline, "|-" none, "|+" all of them. Lines go at
 * indent; empty lines carry no spaces. */
static void write_literal(strbuf *sb, const char *s, size_t len, int indent)
{
    size_t trailing = 0;
    while (trailing < len && s[len - 1 - trailing] == '\n')
        trailing++;
    sb_str(sb, trailing == 0 ? "|-" : trailing == 1 ? "|" : "|+");
    sb_add(sb, "\n", 1);
    size_t body = len - trailing, start = 0;
    for (size_t i = 0; i <= body; i++) {
        if (i < body && s[i] != '\n')
            continue;
        if (i > start)
            sb_pad(sb, indent);
        sb_add(sb, s + start, i - start);
        sb_add(sb, "\n", 1);
        start = i + 1;
    }
    for (size_t i = 1; i < trailing; i++)
        sb_add(sb, "\n", 1);
}

/* Writes s in its style; returns true when that ended the line (a literal
 * block always does). */
static bool write_string(strbuf *sb, const char *s, size_t len, bool allow_block, int indent)
{
    switch (string_style(s, len, allow_block)) {
    case STYLE_PLAIN: sb_add(sb, s, len); break;
    case STYLE_SINGLE: write_single_quoted(sb, s, len); break;
    case STYLE_DOUBLE: write_double_quoted(sb, s, len); break;
    case STYLE_LITERAL: write_literal(sb, s, len, indent); return true;
    }
    return false;
}

static void write_real(strbuf *sb, double d)
{
    char buf[40];
    /* The shortest text that reads back as the same double. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* 33333333333555556.0 prints as 17 digits with nothing to say it is a
     * float, and read back as an integer (fuzz_yaml) */
    if (!strpbrk(buf, ".eEni"))
        strcat(buf, ".0");
    sb_str(sb, buf);
}

/* A scalar or an empty container, then the end of the line. indent is where
 * the lines of a literal block go. */
static void write_scalar_line(strbuf *sb, const json_t *v, int indent)
{
    char buf[32];

    switch (json_typeof(v)) {
    case JSON_STRING:
        if (write_string(sb, json_string_value(v), json_string_length(v), true, indent))
            return;
        break;
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        sb_str(sb, buf);
        break;
    case JSON_REAL: write_real(sb, json_real_value(v)); break;
    case JSON_TRUE: sb_str(sb, "true"); break;
    case JSON_FALSE: sb_str(sb, "false"); break;
    case JSON_NULL: sb_str(sb, "null"); break;
    case JSON_OBJECT: sb_str(sb, "{}"); break;
    case JSON_ARRAY: sb_str(sb, "[]"); break;
    }
    sb_add(sb, "\n", 1);
}

/* ---- containers ------------------------------------------------------- */

static bool is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

static void dump_array(strbuf *sb, const json_t *arr, int indent, bool inline_first);

/* inline_first: the first key goes right after a "- " already written. */
static void dump_object(strbuf *sb, const json_t *obj, int indent, bool inline_first)
{
    const char *k;
    size_t klen;
    json_t *v;
    bool first = true;

    json_object_keylen_foreach((json_t *)obj, k, klen, v) {
        strbuf key = {0};
        if (!(first && inline_first))
            sb_pad(sb, indent);
        first = false;
        write_string(&key, k, klen, false, indent);
        if (key.failed) {
            sb->failed = true;
        } else if (key.len > YAML_KEY_MAX) {
            /* An implicit key is at most 1024 characters (YAML 1.2,
             * 7.4.2): a longer one is written as an explicit key, "? key"
             * and then ":" at the key's indent. */
            sb_add(sb, "? ", 2);
            sb_add(sb, key.data, key.len);
            sb_add(sb, "\n", 1);
            sb_pad(sb, indent);
        } else {
            sb_add(sb, key.data ? key.data : "", key.len);
        }
        free(key.data);
        sb_add(sb, ":", 1);
        if (json_is_object(v) && is_block(v)) {
            sb_add(sb, "\n", 1);
            dump_object(sb, v, indent + 2, false);
        } else if (is_block(v)) {
            /* kubectl style: list items at the indent of their key. */
            sb_add(sb, "\n", 1);
            dump_array(sb, v, indent, false);
        } else {
            sb_add(sb, " ", 1);
            write_scalar_line(sb, v, indent + 2);
        }
    }
}

static void dump_array(strbuf *sb, const json_t *arr, int indent, bool inline_first)
{
    size_t i;
    json_t *v;

    json_array_foreach(arr, i, v) {
        if (!(i == 0 && inline_first))
            sb_pad(sb, indent);
        sb_add(sb, "- ", 2);
        if (json_is_object(v) && is_block(v))
            dump_object(sb, v, indent + 2, true);
        else if (is_block(v))
            dump_array(sb, v, indent + 2, true);
        else
            write_scalar_line(sb, v, indent + 2);
    }
}

char *yaml_dump(const json_t *value)
{
    strbuf sb = {0};

    if (!value)
        return NULL;
    if (json_is_object(value) && is_block(value))
        dump_object(&sb, value, 0, false);
    else if (is_block(value))
        dump_array(&sb, value, 0, false);
    else
        write_scalar_line(&sb, value, 2);
    if (sb.failed) {
        free(sb.data);
        return NULL;
    }
    return sb.data;
}
