/* tmpdir.h - removing a unit test's throwaway directory (a store's data
 * directory, a runtime's pod directories) and everything under it. */
#ifndef TY_TESTS_UNIT_TMPDIR_H
#define TY_TESTS_UNIT_TMPDIR_H

#include <ftw.h>
#include <stdio.h>

static int tmpdir_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes dir and what it holds; what cannot be removed is left. */
static inline void tmpdir_remove(const char *dir)
{
    nftw(dir, tmpdir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
