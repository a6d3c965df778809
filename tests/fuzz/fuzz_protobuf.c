/* fuzz_protobuf.c - the protobuf request bodies client-go sends
 * (pb_decode_object): any bytes give an object or an error, never both,
 * never neither. */
#include <stdint.h>

#include "fuzz.h"
#include "server/protobuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ty_error err;
    json_t *obj;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    ty_error_init(&err);
    obj = pb_decode_object(data, size, &err);
    if (obj && !json_is_object(obj))
        fuzz_fail("pb_decode_object gave a value that is not an object");
    if (!obj && err.code == TY_OK)
        fuzz_fail("pb_decode_object failed without an error");
    json_decref(obj);
    ty_error_clear(&err);
    return 0;
}
