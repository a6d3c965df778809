/* fuzz_quantity.c - resource quantities ("500m", "1.5Gi", "2e3"): a
 * parse either fails with an error or gives a value whose formatted text
 * parses back to the same value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size, 256), buf[64];
    int64_t milli, again;
    ty_error err;

    if (!s)
        return 0;
    ty_error_init(&err);
    if (quantity_parse(s, &milli, &err) == 0) {
        quantity_format(milli, buf, sizeof(buf));
        if (quantity_parse(buf, &again, &err) != 0 || again != milli)
            fuzz_fail("quantity %s -> %lld -> %s does not read back", s, (long long)milli,
                      buf);
        (void)quantity_value(milli);
    }
    ty_error_clear(&err);
    free(s);
    return 0;
}
