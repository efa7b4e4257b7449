/* HDF5 attribute and small dataset helpers (h5attr.h). */
#include "h5attr.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void drop_attr(hid_t obj, const char *name)
{
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
}

static int write_attr(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf)
{
    drop_attr(obj, name);
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, type, buf) >= 0 ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

static hid_t vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static int scalar_attr(hid_t obj, const char *name, hid_t type, const void *buf)
{
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = write_attr(obj, name, type, s, buf);
    H5Sclose(s);
    return rc;
}

int bench_h5_attr_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = vlen_str_type();
    const char *v = value ? value : "";
    int rc = scalar_attr(obj, name, t, &v);
    H5Tclose(t);
    return rc;
}

int bench_h5_attr_int(hid_t obj, const char *name, long long value)
{
    int64_t v = value;
    return scalar_attr(obj, name, H5T_NATIVE_INT64, &v);
}

int bench_h5_attr_u64(hid_t obj, const char *name, unsigned long long value)
{
    uint64_t v = value;
    return scalar_attr(obj, name, H5T_NATIVE_UINT64, &v);
}

int bench_h5_attr_double(hid_t obj, const char *name, double value)
{
    return scalar_attr(obj, name, H5T_NATIVE_DOUBLE, &value);
}

int bench_h5_attr_str_array(hid_t obj, const char *name, const char *const *values, size_t n)
{
    hsize_t dim = n;
    hid_t s = n ? H5Screate_simple(1, &dim, NULL) : H5Screate(H5S_NULL);
    hid_t t = vlen_str_type();
    int rc = write_attr(obj, name, t, s, values);
    H5Tclose(t);
    H5Sclose(s);
    return rc;
}

int bench_h5_attr_int_array(hid_t obj, const char *name, const int *values, size_t n)
{
    hsize_t dim = n;
    hid_t s = n ? H5Screate_simple(1, &dim, NULL) : H5Screate(H5S_NULL);
    int rc = write_attr(obj, name, H5T_NATIVE_INT, s, values);
    H5Sclose(s);
    return rc;
}

int bench_h5_dataset_str(hid_t loc, const char *name, const char *value)
{
    hid_t t = vlen_str_type(), s = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char *v = value ? value : "";
    int rc = d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    H5Tclose(t);
    return rc;
}

hid_t bench_h5_group(hid_t file, const char *path)
{
    if (H5Lexists(file, path, H5P_DEFAULT) > 0)
        return H5Gopen2(file, path, H5P_DEFAULT);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t g = H5Gcreate2(file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(lcpl);
    return g;
}

/* The compound type of a row of `size` bytes with these fields, in this
 * order. */
static hid_t compound_type(size_t size, const bench_h5_field *fields, size_t n)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    for (size_t i = 0; i < n; i++) {
        const bench_h5_field *f = &fields[i];
        if (f->kind == BENCH_H5_CHARS) {
            hid_t s = H5Tcopy(H5T_C_S1);
            H5Tset_size(s, f->size);
            H5Tset_strpad(s, H5T_STR_NULLPAD);
            H5Tinsert(t, f->name, f->offset, s);
            H5Tclose(s);
            continue;
        }
        hid_t native = f->kind == BENCH_H5_INT32 ? H5T_NATIVE_INT32
                     : f->kind == BENCH_H5_INT64 ? H5T_NATIVE_INT64
                     : f->kind == BENCH_H5_UINT64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE;
        H5Tinsert(t, f->name, f->offset, native);
    }
    return t;
}

int bench_h5_table(hid_t loc, const char *name, const bench_h5_field *fields, size_t nfields,
                size_t row_size, const void *rows, size_t n, const char *description)
{
    hid_t type = compound_type(row_size, fields, nfields);
    hsize_t dim = n, chunk = n < 4096 ? n : 4096;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    hid_t dcpl = n ? bench_h5_checked_dcpl(1, &chunk) : H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = dcpl < 0 ? H5I_INVALID_HID : H5Dcreate2(loc, name, type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    int rc = d < 0 || (n && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) ? -1 : 0;
    if (d >= 0 && description)
        rc |= bench_h5_attr_str(d, "description", description);
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    H5Tclose(type);
    return rc;
}

/* Walker of the error stack: the first system error message, else the
 * first description. */
static herr_t error_walker(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    size_t len = 256;
    const char *sys = e->desc ? strstr(e->desc, "error message = '") : NULL;
    if (sys) {
        sys += strlen("error message = '");
        const char *end = strchr(sys, '\'');
        snprintf(buf, len, "%.*s", (int)(end ? end - sys : (long)strlen(sys)), sys);
        return 1;   /* found: stop */
    }
    if (n == 0 && e->desc && !buf[0])
        snprintf(buf, len, "HDF5: %s", e->desc);
    return 0;
}

const char *bench_h5_error_reason(char *buf, size_t len)
{
    char found[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, error_walker, found);
    snprintf(buf, len, "%s", found[0] ? found : "HDF5 gives no reason");
    return buf;
}

/* A string attribute (variable-length, as h5attr and h5py write it, or
 * fixed-size) into buf; 0 or -1. */
int bench_h5_read_attr_str(hid_t obj, const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = -1;
    if (H5Tget_class(ft) == H5T_STRING && H5Sget_simple_extent_ndims(sp) == 0) {
        if (H5Tis_variable_str(ft) > 0) {
            char *s = NULL;
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(ft));
            if (H5Aread(a, mt, &s) >= 0 && s) {
                snprintf(buf, len, "%s", s);
                rc = 0;
            }
            if (s)
                H5free_memory(s);
            H5Tclose(mt);
        } else {
            size_t n = H5Tget_size(ft);
            char *tmp = calloc(n + 1, 1);
            hid_t mt = H5Tcopy(ft);
            if (tmp && H5Aread(a, mt, tmp) >= 0) {
                snprintf(buf, len, "%s", tmp);
                rc = 0;
            }
            free(tmp);
            H5Tclose(mt);
        }
    }
    H5Sclose(sp), H5Tclose(ft), H5Aclose(a);
    return rc;
}

/* A scalar integer attribute (any integer type); 0 or -1. */
int bench_h5_read_attr_int(hid_t obj, const char *name, int64_t *v)
{
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = H5Tget_class(ft) == H5T_INTEGER && H5Sget_simple_extent_npoints(sp) == 1 &&
             H5Aread(a, H5T_NATIVE_INT64, v) >= 0 ? 0 : -1;
    H5Sclose(sp), H5Tclose(ft), H5Aclose(a);
    return rc;
}

hid_t bench_h5_checked_dcpl(int nd, const hsize_t *chunk)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl >= 0 && (H5Pset_chunk(dcpl, nd, chunk) < 0 || H5Pset_fletcher32(dcpl) < 0)) {
        H5Pclose(dcpl);
        return H5I_INVALID_HID;
    }
    return dcpl;
}
