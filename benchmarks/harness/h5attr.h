/* HDF5 helpers every archive writer uses: typed attributes, a string
 * dataset, tables of C structs, a group opened or created by path.  The
 * bottom of the harness: it includes nothing of reducerbench's own, so any
 * file may call it. */
#ifndef BENCH_H5ATTR_H
#define BENCH_H5ATTR_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* Attribute writers: 0 on success, -1 on failure.  Strings are scalar,
 * variable-length UTF-8 (h5py reads them as str); an existing attribute of
 * that name is replaced. */
int bench_h5_attr_str(hid_t obj, const char *name, const char *value);
int bench_h5_attr_int(hid_t obj, const char *name, long long value);
int bench_h5_attr_u64(hid_t obj, const char *name, unsigned long long value);
int bench_h5_attr_double(hid_t obj, const char *name, double value);
int bench_h5_attr_str_array(hid_t obj, const char *name, const char *const *values, size_t n);
int bench_h5_attr_int_array(hid_t obj, const char *name, const int *values, size_t n);
/* Why the last HDF5 call failed, from the library's error stack: the
 * system's reason when HDF5 recorded one ("No space left on device"),
 * else the innermost description; into buf, which is returned. */
const char *bench_h5_error_reason(char *buf, size_t len);
/* Reading: a scalar string attribute (variable-length, as these functions
 * and h5py write it, or fixed-size) into buf, cut to len; a scalar
 * integer attribute of any integer type.  0, or -1 when absent or of
 * another kind. */
int bench_h5_read_attr_str(hid_t obj, const char *name, char *buf, size_t len);
int bench_h5_read_attr_int(hid_t obj, const char *name, int64_t *v);
/* Scalar variable-length string dataset (e.g. an XML document). */
int bench_h5_dataset_str(hid_t loc, const char *name, const char *value);
/* A member of a table's row (a C struct) and its HDF5 type. */
typedef enum {
    BENCH_H5_INT32, BENCH_H5_INT64, BENCH_H5_UINT64, BENCH_H5_DOUBLE,
    BENCH_H5_CHARS,         /* fixed-size string, NUL-padded (char name[N]) */
} bench_h5_kind;
typedef struct bench_h5_field {
    const char *name;
    size_t offset, size;
    bench_h5_kind kind;
} bench_h5_field;
/* The field of struct type named as its member. */
#define BENCH_H5_FIELD(type, member, kind) \
    {#member, offsetof(type, member), sizeof(((type *)0)->member), kind}
/* A 1-D dataset of n rows (structs of row_size bytes with these fields)
 * at loc, with a "description" attribute unless description is NULL; 0
 * or -1. */
int bench_h5_table(hid_t loc, const char *name, const bench_h5_field *fields, size_t nfields,
                size_t row_size, const void *rows, size_t n, const char *description);
/* The creation properties of every dataset the tools write: chunked by
 * chunk (nd dims, each >= 1) and checksummed with HDF5's fletcher32, so a
 * flipped bit in the data fails the read that meets it rather than
 * passing as a value.  H5I_INVALID_HID on failure; the caller closes it.
 * (The metadata keeps HDF5's default format, without checksums of its
 * own: HDF5 1.10.8's H5Ocopy, which rb-archive merge uses through h5py,
 * crashed copying a variable-length string dataset out of a file in the
 * newer format.) */
hid_t bench_h5_checked_dcpl(int nd, const hsize_t *chunk);
/* Open the group at path, creating it (and missing parents) if needed;
 * H5I_INVALID_HID on failure. */
hid_t bench_h5_group(hid_t file, const char *path);

#endif
