/* trainer_seed.h - the built-in ClusterTrainingRuntimes (api/trainer.h)
 * made in the store when the server starts. */
#ifndef TY_SERVER_TRAINER_SEED_H
#define TY_SERVER_TRAINER_SEED_H

#include "base/error.h"
#include "store/store.h"

/* Creates each built-in runtime the store lacks, defaulted and validated as
 * a client's would be. One that exists is left as it is, whatever an admin
 * made of it; one deleted comes back at the next start, as the default
 * queue does. 0, or -1 with err. */
int server_seed_trainer_runtimes(ty_store *s, ty_error *err);

#endif
