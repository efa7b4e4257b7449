/* PLACEHOLDER archive (issue 5 replaces it): accepts only "none". */
#include "archive.h"

#include <stdio.h>
#include <string.h>

int rb_archive_open(MPI_Comm comm, const char *tool, const char *path, int force,
                    int argc, char **argv, rb_archive **out)
{
    (void)comm, (void)tool, (void)force, (void)argc, (void)argv;
    *out = NULL;
    if (path && !strcmp(path, "none"))
        return 0;
    fprintf(stderr, "archive: not implemented yet (use -o none)\n");
    return 1;
}
const char *rb_archive_path(const rb_archive *a) { (void)a; return NULL; }
int rb_archive_micro_row(rb_archive *a, const rb_micro_row *row, const rb_options *opts,
                         const double *samples_us, int iters, int ranks)
{
    (void)a, (void)row, (void)opts, (void)samples_us, (void)iters, (void)ranks;
    return 0;
}
hid_t rb_archive_file(rb_archive *a) { (void)a; return H5I_INVALID_HID; }
int rb_archive_close(rb_archive *a, int success) { (void)a, (void)success; return 0; }
