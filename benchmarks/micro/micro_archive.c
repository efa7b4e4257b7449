/* rb_micro's groups of the results archive (micro_archive.h).  Only rank
 * 0 holds the file; the row count is the length of /micro/results, so
 * nothing but the file keeps state (the archive holds the dataset open). */
#include "micro_archive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/h5attr.h"

#define ROOT 0
#define ROWS_CHUNK 64

static const char results_path[] = "/micro/results";

static int is_root(bench_archive *a)
{
    return bench_archive_file(a) != H5I_INVALID_HID;
}

/* /micro/results, empty, with the columns' units: the first row makes it. */
static hid_t create_results(hid_t file)
{
    hid_t g = bench_h5_group(file, "/micro");
    if (g < 0)
        return H5I_INVALID_HID;
    size_t ncol;
    const micro_column *col = micro_columns(&ncol);
    const char **units = malloc(ncol * sizeof *units);
    hsize_t dim = 0, maxdim = H5S_UNLIMITED, chunk = ROWS_CHUNK;
    hid_t s = H5Screate_simple(1, &dim, &maxdim), dcpl = bench_h5_checked_dcpl(1, &chunk);
    hid_t t = micro_row_h5type();
    hid_t d = units && dcpl >= 0 ? H5Dcreate2(g, "results", t, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)
                                 : H5I_INVALID_HID;
    if (d >= 0) {
        for (size_t i = 0; i < ncol; i++)
            units[i] = col[i].units;
        bench_h5_attr_str_array(d, "units", units, ncol);
        bench_h5_attr_str(d, "description", "one row per (reducer, size, density, layout, overlap, ranks); "
                                            "columns as in the stdout table, see results/README.md");
    }
    free(units);
    H5Tclose(t);
    H5Pclose(dcpl);
    H5Sclose(s);
    H5Gclose(g);
    return d;
}

/* Rank 0: /micro/results, opened; H5I_INVALID_HID when no row was
 * appended yet. */
static hid_t open_results(hid_t file)
{
    if (H5Lexists(file, "/micro", H5P_DEFAULT) <= 0 || H5Lexists(file, results_path, H5P_DEFAULT) <= 0)
        return H5I_INVALID_HID;
    return H5Dopen2(file, results_path, H5P_DEFAULT);
}

/* Rank 0: the rows /micro/results holds. */
static hsize_t results_rows(hid_t file)
{
    hid_t d = open_results(file);
    if (d < 0)
        return 0;
    hid_t s = H5Dget_space(d);
    hsize_t n = 0;
    if (s < 0 || H5Sget_simple_extent_dims(s, &n, NULL) != 1)
        n = 0;
    if (s >= 0)
        H5Sclose(s);
    H5Dclose(d);
    return n;
}

/* Rank 0: row as row number n of /micro/results (created by the first). */
static int append_row(bench_archive *a, const micro_row *row, hsize_t n)
{
    hid_t file = bench_archive_file(a);
    hid_t d = n ? open_results(file) : create_results(file);
    if (d < 0)
        return -1;
    hsize_t one = 1, size = n + 1;
    int rc = -1;
    if (H5Dset_extent(d, &size) >= 0) {
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &one, NULL), t = micro_row_h5type();
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &n, NULL, &one, NULL);
        rc = H5Dwrite(d, t, ms, fs, H5P_DEFAULT, row) < 0 ? -1 : 0;
        H5Tclose(t);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    /* The archive holds the dataset as created until it closes (the rows'
     * chunk stays cached; a full disk shows at "cannot finish"); a later
     * row's own handle only closes that handle. */
    if (n == 0 && bench_archive_hold(a, d) == 0)
        return rc;
    return H5Dclose(d) < 0 ? -1 : rc;
}

/* The reducer's options as typed attributes opt_<key> (only those that
 * apply to it), and all of them as text in "options". */
static int write_options(hid_t obj, const char *reducer, const rb_options *opts)
{
    char all[4096] = "", val[128];
    size_t off = 0;
    int rc = 0;
    for (size_t i = 0; i < rb_option_count(); i++) {
        const rb_option_info *info = rb_option_info_at(i);
        if (rb_option_format(opts, i, val, sizeof val) != RB_OK)
            continue;
        if (off < sizeof all)
            off += (size_t)snprintf(all + off, sizeof all - off, "%s%s=%s", off ? " " : "", info->key, val);
        if (!rb_option_applies(i, reducer))
            continue;
        char name[96];
        snprintf(name, sizeof name, "opt_%s", info->key);
        switch (info->type) {
        case RB_OPT_INT: rc |= bench_h5_attr_int(obj, name, strtoll(val, NULL, 10)); break;
        case RB_OPT_U64: rc |= bench_h5_attr_u64(obj, name, strtoull(val, NULL, 10)); break;
        case RB_OPT_DOUBLE: rc |= bench_h5_attr_double(obj, name, strtod(val, NULL)); break;
        case RB_OPT_BOOL: rc |= bench_h5_attr_int(obj, name, !strcmp(val, "on")); break;
        case RB_OPT_ENUM: rc |= bench_h5_attr_str(obj, name, val); break;
        }
    }
    return rc | bench_h5_attr_str(obj, "options", all);
}

/* Rank 0: the samples of row number n as /micro/samples/<n>. */
static int write_samples(hid_t file, hsize_t n, const micro_row *row, const rb_options *opts,
                         const double *samples_us, int iters, int ranks)
{
    hid_t g = bench_h5_group(file, "/micro/samples");
    if (g < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof name, "%llu", (unsigned long long)n);
    hsize_t dims[2] = {(hsize_t)(iters > 0 ? iters : 0), (hsize_t)(ranks > 0 ? ranks : 0)};
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = dims[0] && dims[1] ? bench_h5_checked_dcpl(2, dims) : H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = dcpl < 0 ? H5I_INVALID_HID : H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    int rc = d < 0 ? -1 : 0;
    if (d >= 0 && dims[0] * dims[1] > 0 && samples_us)
        rc |= H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, samples_us) < 0;
    if (d >= 0) {
        rc |= bench_h5_attr_str(d, "units", "us");
        rc |= bench_h5_attr_str(d, "dims", "iteration x rank");
        rc |= bench_h5_attr_int(d, "row", (long long)n);
        rc |= bench_h5_attr_str(d, "reducer", row->reducer);
        rc |= write_options(d, row->reducer, opts);
        H5Dclose(d);
    }
    H5Sclose(s);
    H5Gclose(g);
    return rc;
}

int micro_archive_row(bench_archive *a, const micro_row *row, const rb_options *opts,
                      const double *samples_us, int iters, int ranks)
{
    if (!a)
        return 0;
    int rc = 0;
    if (is_root(a)) {
        hid_t file = bench_archive_file(a);
        hsize_t n = results_rows(file);
        rc = write_samples(file, n, row, opts, samples_us, iters, ranks);
        rc = rc || append_row(a, row, n);
    }
    return bench_archive_agree(a, rc, "append a row to");
}

int micro_archive_papi(bench_archive *a, const bench_papi *papi)
{
    if (!a || !papi)
        return 0;
    /* Every rank needs the row index: only rank 0 holds the file. */
    long row = micro_archive_rows(a) - 1;
    MPI_Bcast(&row, 1, MPI_LONG, ROOT, bench_archive_comm(a));
    char path[64];
    snprintf(path, sizeof path, "/micro/papi/%ld", row < 0 ? 0 : row);
    return bench_archive_papi(a, path, papi);
}

long micro_archive_rows(bench_archive *a)
{
    return a && is_root(a) ? (long)results_rows(bench_archive_file(a)) : 0;
}
