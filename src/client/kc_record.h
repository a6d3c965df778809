/* kc_record.h - RECORD ops (kc.h) run as requests, their repeats made cheap
 * by a bounded memory of what was recorded (kc_record.c). For kc.c and
 * tests. */
#ifndef TY_CLIENT_KC_RECORD_H
#define TY_CLIENT_KC_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "client/kc.h"

/* Runs RECORD op over c: a create, and when the name is taken op->fn on
 * the object there (kc_mutate). remembers: c's writes are requests, and
 * the count last written under each name is kept (process-wide, the 4,096
 * names used last, per client) so that a repeat is one merge patch of what
 * op->fn changes when given {"count": N} (Events: count, lastTimestamp),
 * without the create and the read. Takes over op->obj and op->text;
 * reports nothing (op->err cleared). */
void kc_record_run(ty_kc *c, kc_op *op, bool remembers);
/* Forgets what was remembered for c (kc_free: a later client at the same
 * address must not take its names for repeats). */
void kc_record_forget_client(const ty_kc *c);
/* How many names are remembered now (tests). */
size_t kc_record_remembered(void);

#endif
