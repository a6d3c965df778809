/* quantity.c - Kubernetes resource quantities as int64 milli-units.
 *
 * The number is parsed into its decimal digits and a decimal point position,
 * multiplied by 2^n for binary suffixes on the digit string itself, and only
 * then cut into an integer part and a fraction. Working on the digits keeps the
 * result exact for every input ("1.5Gi", "0.1m", "1e-30") without a bignum
 * library, and a non-zero fraction is what triggers rounding up.
 */
#include "model/quantity.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define QTY_REGEX "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

/* Longest number we look at; longer text is refused rather than grown into. */
#define QTY_MAX_DIGITS 128
/* Room for the digits plus the growth of a multiplication by 2^60. */
#define QTY_BUF (QTY_MAX_DIGITS + 24)
/* Zeros do not use buffer space but still move the point; cap them too. */
#define QTY_MAX_TEXT 4096

typedef struct digits {
    unsigned char d[QTY_BUF]; /* most significant first, values 0..9 */
    int n;                    /* number of digits in d */
    int point;                /* digits before the decimal point; may be <0 or >n */
} digits;

static int bad_quantity(ty_error *err, const char *s)
{
    return ty_seterr(err, TY_EINVALID,
                     "quantities must match the regular expression '%s' (got \"%s\")",
                     QTY_REGEX, s);
}

/* Reads [0-9]*(.[0-9]*)? with at least one digit. Returns the characters used,
 * or 0 when there is no number there. */
static size_t scan_number(const char *p, digits *num, bool *too_long)
{
    size_t i = 0;
    int ndigits = 0;
    bool seen_point = false;

    num->n = 0;
    num->point = 0;
    *too_long = false;
    for (;; i++) {
        char c = p[i];
        if (c == '.' && !seen_point) {
            seen_point = true;
            continue;
        }
        if (c < '0' || c > '9')
            break;
        if (++ndigits > QTY_MAX_TEXT) {
            *too_long = true;
            return 0;
        }
        if (num->n == 0 && c == '0') {
            /* Leading zeros carry no value; zeros after the point shift it. */
            if (seen_point)
                num->point--;
            continue;
        }
        if (num->n >= QTY_MAX_DIGITS) {
            *too_long = true;
            return 0;
        }
        num->d[num->n++] = (unsigned char)(c - '0');
        if (!seen_point)
            num->point++;
    }
    return ndigits > 0 ? i : 0;
}

/* Parses the suffix into a power of two and a power of ten. */
static int parse_suffix(const char *p, int *pow2, int *pow10)
{
    static const struct {
        const char *text;
        int pow2, pow10;
    } table[] = {
        {"", 0, 0},    {"n", 0, -9},  {"u", 0, -6},  {"m", 0, -3},  {"k", 0, 3},
        {"M", 0, 6},   {"G", 0, 9},   {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18},
        {"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0}, {"Pi", 50, 0},
        {"Ei", 60, 0},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strcmp(p, table[i].text) == 0) {
            *pow2 = table[i].pow2;
            *pow10 = table[i].pow10;
            return 0;
        }
    }
    /* A decimal exponent: e or E, an optional sign, then digits. "E" alone
     * was matched above as exa. */
    if (p[0] != 'e' && p[0] != 'E')
        return -1;
    p++;
    bool neg = *p == '-';
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return -1;
    long exp = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        /* Anything past a few hundred is all fraction or certain overflow. */
        if (exp < 100000)
            exp = exp * 10 + (*p - '0');
    }
    *pow2 = 0;
    *pow10 = (int)(neg ? -exp : exp);
    return 0;
}

static void multiply_pow2(digits *num, int pow2)
{
    for (int k = 0; k < pow2; k++) {
        int carry = 0;
        for (int i = num->n - 1; i >= 0; i--) {
            int v = num->d[i] * 2 + carry;
            num->d[i] = (unsigned char)(v % 10);
            carry = v / 10;
        }
        if (carry) {
            memmove(num->d + 1, num->d, (size_t)num->n);
            num->d[0] = (unsigned char)carry;
            num->n++;
            num->point++;
        }
    }
}

/* The integer part of num, plus one when a non-zero fraction remains.
 * Returns -1 on int64 overflow. */
static int round_up_integer(const digits *num, int64_t *out)
{
    int64_t v = 0;
    bool fraction = false;

    if (num->n == 0) {
        *out = 0;
        return 0;
    }
    /* num has no leading zero digit, so more than 19 integer digits is past
     * INT64_MAX (about 9.2e18). */
    if (num->point > 19)
        return -1;
    for (int i = 0; i < num->point; i++) {
        int digit = i < num->n ? num->d[i] : 0;
        if (v > (INT64_MAX - digit) / 10)
            return -1;
        v = v * 10 + digit;
    }
    for (int i = num->point < 0 ? 0 : num->point; i < num->n; i++)
        if (num->d[i])
            fraction = true;
    if (fraction) {
        if (v == INT64_MAX)
            return -1;
        v++;
    }
    *out = v;
    return 0;
}

int quantity_parse(const char *s, int64_t *milli, ty_error *err)
{
    digits num;
    bool too_long;
    int pow2 = 0, pow10 = 0;
    const char *p = s;
    bool neg = false;
    int64_t magnitude;

    if (!s || !*s)
        return ty_seterr(err, TY_EINVALID, "quantities must match the regular expression "
                                           "'%s' (got an empty string)", QTY_REGEX);
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    size_t used = scan_number(p, &num, &too_long);
    if (too_long)
        return ty_seterr(err, TY_EINVALID, "quantity \"%.64s...\" has too many digits", s);
    if (used == 0)
        return bad_quantity(err, s);
    if (parse_suffix(p + used, &pow2, &pow10) < 0)
        return ty_seterr(err, TY_EINVALID, "unable to parse quantity's suffix in \"%s\"", s);

    multiply_pow2(&num, pow2);
    if (num.n > 0) {
        /* +3 converts units into milli-units. The clamp keeps int arithmetic
         * safe; either end is far past any representable value. */
        long shift = (long)num.point + pow10 + 3;
        if (shift > 100000)
            shift = 100000;
        if (shift < -100000)
            shift = -100000;
        num.point = (int)shift;
    }
    if (round_up_integer(&num, &magnitude) < 0)
        return ty_seterr(err, TY_EINVALID,
                         "quantity \"%s\" is too large (the limit is 9223372036854775807m)", s);
    *milli = neg ? -magnitude : magnitude;
    return 0;
}

void quantity_format(int64_t milli, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    if (milli % 1000 == 0)
        snprintf(buf, len, "%lld", (long long)(milli / 1000));
    else
        snprintf(buf, len, "%lldm", (long long)milli);
}

int64_t quantity_value(int64_t milli)
{
    int64_t whole = milli / 1000;
    int64_t rest = milli % 1000;

    /* Away from zero, as Quantity.Value() rounds. */
    if (rest > 0)
        whole++;
    else if (rest < 0)
        whole--;
    return whole;
}
