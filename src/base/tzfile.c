/* tzfile.c - TZif files read into a transition table (see tzfile.h). */
#include "base/tzfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TZ_DIR "/usr/share/zoneinfo"
#define TZ_MAX_FILE (1 << 20) /* real files are a few KiB */
#define TZ_MAX_NAME 255
#define TZ_MAX_TIMES 100000
#define TZ_MAX_TYPES 256

struct tz_zone {
    size_t ntimes;
    int64_t *times;   /* ascending transition instants */
    int32_t *offsets; /* offset in effect from times[i] on */
    int32_t before;   /* offset before the first transition */
};

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

tz_zone *tz_utc(void)
{
    return calloc(1, sizeof(tz_zone));
}

void tz_free(tz_zone *z)
{
    if (!z)
        return;
    free(z->times);
    free(z->offsets);
    free(z);
}

typedef struct {
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
} tz_counts;

/* The header at p (44 bytes); false when it is not one. */
static bool read_header(const unsigned char *p, size_t left, tz_counts *c, char *version)
{
    if (left < 44 || memcmp(p, "TZif", 4) != 0)
        return false;
    *version = (char)p[4];
    c->isutcnt = be32(p + 20);
    c->isstdcnt = be32(p + 24);
    c->leapcnt = be32(p + 28);
    c->timecnt = be32(p + 32);
    c->typecnt = be32(p + 36);
    c->charcnt = be32(p + 40);
    return c->typecnt > 0 && c->typecnt <= TZ_MAX_TYPES && c->timecnt <= TZ_MAX_TIMES &&
           c->leapcnt <= TZ_MAX_TIMES && c->charcnt <= 65536 &&
           (c->isutcnt == 0 || c->isutcnt == c->typecnt) &&
           (c->isstdcnt == 0 || c->isstdcnt == c->typecnt);
}

/* Bytes of the data block that follows a header, with times of tsize bytes. */
static size_t block_size(const tz_counts *c, size_t tsize)
{
    return (size_t)c->timecnt * (tsize + 1) + (size_t)c->typecnt * 6 + c->charcnt +
           (size_t)c->leapcnt * (tsize + 4) + c->isstdcnt + c->isutcnt;
}

tz_zone *tz_parse(const unsigned char *data, size_t len, ty_error *err)
{
    tz_counts c;
    char version;
    size_t tsize = 4, off = 44;
    const unsigned char *times, *idx, *types;
    tz_zone *z;

    if (!read_header(data, len, &c, &version))
        goto bad;
    if (version >= '2') {
        /* Skip the 32-bit block: the 64-bit one after it is complete. */
        off += block_size(&c, 4);
        if (off > len || !read_header(data + off, len - off, &c, &version))
            goto bad;
        off += 44;
        tsize = 8;
    }
    if (block_size(&c, tsize) > len - off)
        goto bad;
    times = data + off;
    idx = times + (size_t)c.timecnt * tsize;
    types = idx + c.timecnt;
    if (!(z = calloc(1, sizeof(*z))))
        return ty_seterr(err, TY_EINTERNAL, "out of memory"), NULL;
    z->times = malloc((c.timecnt ? c.timecnt : 1) * sizeof(int64_t));
    z->offsets = malloc((c.timecnt ? c.timecnt : 1) * sizeof(int32_t));
    if (!z->times || !z->offsets) {
        tz_free(z);
        return ty_seterr(err, TY_EINTERNAL, "out of memory"), NULL;
    }
    /* RFC 8536: before the first transition, type 0 is in effect. */
    z->before = (int32_t)be32(types);
    for (uint32_t i = 0; i < c.timecnt; i++) {
        int64_t t = tsize == 8 ? be64(times + (size_t)i * 8) : (int32_t)be32(times + (size_t)i * 4);
        unsigned k = idx[i];
        if (k >= c.typecnt || (i > 0 && t <= z->times[i - 1])) {
            tz_free(z);
            goto bad;
        }
        z->times[i] = t;
        z->offsets[i] = (int32_t)be32(types + (size_t)k * 6);
    }
    z->ntimes = c.timecnt;
    /* Offsets beyond a day are not a time zone's (RFC 8536 bounds them). */
    for (size_t i = 0; i < z->ntimes; i++)
        if (z->offsets[i] <= -89999 || z->offsets[i] >= 93600) {
            tz_free(z);
            goto bad;
        }
    if (z->before <= -89999 || z->before >= 93600) {
        tz_free(z);
        goto bad;
    }
    return z;
bad:
    ty_seterr(err, TY_EINVALID, "not a TZif time zone file");
    return NULL;
}

/* Whether name may be looked up under the zone directory: relative, no "."
 * or ".." parts, the characters zone names use. */
static bool name_ok(const char *name)
{
    size_t len = strlen(name);
    const char *p = name;

    if (len == 0 || len > TZ_MAX_NAME || name[0] == '/')
        return false;
    for (const char *s = name; *s; s++)
        if (!(*s == '/' || *s == '-' || *s == '_' || *s == '.' || *s == '+' ||
              (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
            return false;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += n;
        if (*p == '/')
            p++;
        else
            break;
    }
    return name[len - 1] != '/';
}

tz_zone *tz_load(const char *dir, const char *name, ty_error *err)
{
    char path[TZ_MAX_NAME + 512];
    unsigned char *buf;
    size_t len;
    FILE *f;
    tz_zone *z;

    if (!name) {
        snprintf(path, sizeof(path), "/etc/localtime");
    } else {
        if (!name_ok(name))
            return ty_seterr(err, TY_EINVALID, "unknown time zone %.64s", name), NULL;
        snprintf(path, sizeof(path), "%s/%s", dir ? dir : TZ_DIR, name);
    }
    if (!(f = fopen(path, "rb"))) {
        if (!name)
            return tz_utc();
        return ty_seterr(err, TY_EINVALID, "unknown time zone %.64s", name), NULL;
    }
    if (!(buf = malloc(TZ_MAX_FILE))) {
        fclose(f);
        return ty_seterr(err, TY_EINTERNAL, "out of memory"), NULL;
    }
    len = fread(buf, 1, TZ_MAX_FILE, f);
    fclose(f);
    z = tz_parse(buf, len, err);
    free(buf);
    if (!z && name)
        ty_seterr(err, TY_EINVALID, "unknown time zone %.64s", name);
    return z;
}

int32_t tz_offset(const tz_zone *z, int64_t utc)
{
    size_t lo = 0, hi;

    if (!z || z->ntimes == 0)
        return z ? z->before : 0;
    if (utc < z->times[0])
        return z->before;
    /* The last transition at or before utc. */
    hi = z->ntimes;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->times[mid] <= utc)
            lo = mid;
        else
            hi = mid;
    }
    return z->offsets[lo];
}
