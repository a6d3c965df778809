/* dirlock.h - one server per data directory.
 *
 * The lock is a POSIX record lock on <dir>/server.lock, which holds the
 * holder's pid as text. The kernel drops it when the process ends, however
 * it ends (SIGKILL included), so a crash never leaves a stale lock; and
 * record locks are not inherited by fork, so the pod supervisors that
 * outlive the server never hold it. */
#ifndef TY_BASE_DIRLOCK_H
#define TY_BASE_DIRLOCK_H

#include <sys/types.h>

#include "base/error.h"

/* Creates dir if missing and locks it for this process. Returns the lock's
 * descriptor (keep it open for as long as the lock should be held; closing
 * it releases the lock), or -1 with err: TY_ECONFLICT naming the holder's
 * pid when another process holds it, TY_EINTERNAL otherwise. */
int ty_dirlock_take(const char *dir, ty_error *err);

/* The pid holding dir's lock, 0 when none does, -1 when it cannot be told. */
pid_t ty_dirlock_holder(const char *dir);

#endif
