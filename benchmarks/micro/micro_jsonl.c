/* rb_micro -J: the finished archive as JSON lines (micro_jsonl.h). */
#include "micro_jsonl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/h5attr.h"
#include "harness/tmpfiles.h"
#include "micro_row.h"

/* Root attributes left out of every line: the file exists only when the
 * run completed, so these say nothing. */
static const char *const skipped_attrs[] = {"complete", "end_time"};

static void put_string(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* NaN and infinities are not JSON: null (pandas reads NaN). */
static void put_double(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static int is_column_name(const char *name)
{
    size_t n;
    const micro_column *c = micro_columns(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name))
            return 1;
    return 0;
}

/* One scalar element of an attribute's buffer. */
static void put_element(FILE *f, hid_t type, const char *p)
{
    H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_STRING && H5Tis_variable_str(type) > 0) {
        const char *s = *(char *const *)(const void *)p;
        put_string(f, s ? s : "", s ? strlen(s) : 0);
    } else if (cls == H5T_STRING) {
        put_string(f, p, H5Tget_size(type));
    } else if (cls == H5T_INTEGER) {
        long long v = 0;
        memcpy(&v, p, sizeof v);
        fprintf(f, "%lld", v);
    } else {
        double v = 0;
        memcpy(&v, p, sizeof v);
        put_double(f, v);
    }
}

typedef struct meta_ctx {
    FILE *f;
    int failed;
} meta_ctx;

/* Memory type an attribute is read as: strings as stored, integers as
 * long long, floats as double; 0 for other classes (not exported). */
static hid_t memory_type(hid_t ftype)
{
    switch (H5Tget_class(ftype)) {
    case H5T_STRING: return H5Tcopy(ftype);
    case H5T_INTEGER: return H5Tcopy(H5T_NATIVE_LLONG);
    case H5T_FLOAT: return H5Tcopy(H5T_NATIVE_DOUBLE);
    default: return 0;
    }
}

static herr_t put_attr(hid_t obj, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    meta_ctx *m = data;
    for (size_t i = 0; i < sizeof skipped_attrs / sizeof *skipped_attrs; i++)
        if (!strcmp(name, skipped_attrs[i]))
            return 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), ft = H5Aget_type(a), sp = H5Aget_space(a);
    hid_t mt = memory_type(ft);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    int scalar = H5Sget_simple_extent_ndims(sp) == 0;
    char *buf = mt > 0 && n > 0 ? calloc((size_t)n, H5Tget_size(mt)) : NULL;
    if (buf && H5Aread(a, mt, buf) >= 0) {
        fprintf(m->f, ", \"%s%s\": ", is_column_name(name) ? "run_" : "", name);
        if (!scalar)
            fputc('[', m->f);
        for (hssize_t i = 0; i < n; i++) {
            if (i)
                fputs(", ", m->f);
            put_element(m->f, mt, buf + (size_t)i * H5Tget_size(mt));
        }
        if (!scalar)
            fputc(']', m->f);
        if (H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0)
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
    } else if (mt > 0 && n > 0) {
        m->failed = 1;
    }
    free(buf);
    if (mt > 0)
        H5Tclose(mt);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Aclose(a);
    return 0;
}

static void put_row(FILE *f, const micro_row *row)
{
    size_t n;
    const micro_column *c = micro_columns(&n);
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)row + c[i].off;
        fprintf(f, ", \"%s\": ", c[i].name);
        switch (c[i].type) {
        case MICRO_COL_NAME: put_string(f, p, MICRO_NAME_LEN); break;
        case MICRO_COL_U64: { uint64_t v; memcpy(&v, p, sizeof v); fprintf(f, "%llu", (unsigned long long)v); break; }
        case MICRO_COL_I32: { int32_t v; memcpy(&v, p, sizeof v); fprintf(f, "%d", (int)v); break; }
        case MICRO_COL_I64: { int64_t v; memcpy(&v, p, sizeof v); fprintf(f, "%lld", (long long)v); break; }
        default: { double v; memcpy(&v, p, sizeof v); put_double(f, v); break; }
        }
    }
}

/* Every row of /micro/results, each with the root's metadata. */
static int write_lines(hid_t file, FILE *out, char *msg, size_t mlen)
{
    hid_t d = H5Dopen2(file, "/micro/results", H5P_DEFAULT);
    if (d < 0)
        return snprintf(msg, mlen, "the archive has no /micro/results"), -1;
    hid_t sp = H5Dget_space(d), t = micro_row_h5type();
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    micro_row *rows = calloc(n > 0 ? (size_t)n : 1, sizeof *rows);
    int rc = rows && (n == 0 || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0) ? 0 : -1;
    if (rc)
        snprintf(msg, mlen, "cannot read /micro/results");
    for (hssize_t i = 0; i < n && !rc; i++) {
        meta_ctx m = {out, 0};
        fprintf(out, "{\"schema\": \"%s\"", MICRO_JSONL_SCHEMA);
        hsize_t idx = 0;
        H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, &idx, put_attr, &m);
        fprintf(out, ", \"row\": %lld", (long long)i);
        put_row(out, &rows[i]);
        fputs("}\n", out);
        if (m.failed)
            rc = -1, snprintf(msg, mlen, "cannot read the archive's root attributes");
    }
    free(rows);
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(d);
    return rc;
}

int micro_jsonl_target_ok(const char *path, int force, char *msg, size_t mlen)
{
    char why[PATH_MAX + 512];
    if (bench_output_ok(path, force, why, sizeof why) == 0)
        return 0;
    snprintf(msg, mlen, "-J: %s", why);
    return -1;
}

int micro_jsonl_export(const char *h5path, const char *path, int force, char *msg, size_t mlen)
{
    char tmp[4200];
    bench_tmp_name(path, tmp, sizeof tmp);
    FILE *out = fopen(tmp, "w");
    if (!out)
        return snprintf(msg, mlen, "-J: cannot write %s: %s", tmp, strerror(errno)), -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(h5path, H5F_ACC_RDONLY, H5P_DEFAULT);
    char why[256] = "";
    if (file < 0)
        bench_h5_error_reason(why, sizeof why);
    int rc = file < 0 ? (snprintf(msg, mlen, "-J: cannot open %s: %s", h5path, why), -1)
                      : write_lines(file, out, msg, mlen);
    if (file >= 0)
        H5Fclose(file);
    if (fclose(out) != 0 && !rc)
        rc = -1, snprintf(msg, mlen, "-J: cannot write %s: %s", tmp, strerror(errno));
    /* Without --force never onto a file made meanwhile (another run). */
    if (!rc && bench_tmp_commit(tmp, path, force) != 0) {
        rc = -1;
        if (errno == EEXIST)
            snprintf(msg, mlen, "-J: refusing to overwrite existing %s (use --force): it appeared "
                     "while this run was measuring", path);
        else
            snprintf(msg, mlen, "-J: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    }
    if (rc)
        unlink(tmp);
    return rc;
}
