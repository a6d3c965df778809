#!/bin/sh
# No store call, store type or store include above the client layer: the
# controllers, the scheduler and the runtimes go through client/kc.h.
# Comments may name the store; code may not.
root=${1:-.}
found=$(cd "$root" && grep -rnE '(^|[^_[:alnum:]])(store_[a-z_]+|ty_store)([^_[:alnum:]]|$)|#include "store/' \
    src/controller src/scheduler src/runtime --include='*.c' --include='*.h' |
    grep -vE '^[^:]+:[0-9]+:\s*(/\*|\*)')
if [ -n "$found" ]; then
    echo "store used above the client layer:"
    echo "$found"
    exit 1
fi
echo "no store use under src/controller, src/scheduler, src/runtime"
