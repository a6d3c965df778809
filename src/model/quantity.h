/* quantity.h - Kubernetes resource quantities ("500m", "2Gi", "1.5", "1e3").
 *
 * A quantity is held as a signed count of milli-units (int64), which covers
 * every CPU value and memory up to ~9 PB exactly. Parsing accepts the full
 * Kubernetes grammar: decimal SI suffixes (n u m "" k M G T P E), binary
 * suffixes (Ki Mi Gi Ti Pi Ei) and decimal exponents (e3, E-2). Values that
 * are finer than a milli-unit are rounded up, as Kubernetes does.
 */
#ifndef TY_MODEL_QUANTITY_H
#define TY_MODEL_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Parses s into milli-units. Returns 0, or -1 with TY_EINVALID and a message
 * such as "quantities must match the regular expression ..." on bad input or
 * overflow. */
int quantity_parse(const char *s, int64_t *milli, ty_error *err);

/* Canonical text of a milli-unit count: "500m", "2", "1500m"; whole numbers
 * that are exact multiples of 1024^n bytes are NOT rewritten (the caller's
 * original text is what is stored; this is for computed totals). */
void quantity_format(int64_t milli, char *buf, size_t len);

/* The value rounded up to whole units (as Quantity.Value()). */
int64_t quantity_value(int64_t milli);

#endif
