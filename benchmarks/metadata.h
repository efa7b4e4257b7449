/* Run metadata for the results archive (root attributes, Adiak-style
 * names; results/README.md lists them) and the small HDF5 attribute
 * helpers every archive writer uses. */
#ifndef RB_METADATA_H
#define RB_METADATA_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

/* Schema of the files written (results/README.md); bump on any change a
 * reader could notice. */
#define RB_SCHEMA_VERSION 1

/* Collective (gathers host names).  Writes the metadata known at start on
 * root's file (ignored elsewhere).  Returns non-zero on every rank when
 * root failed. */
int rb_metadata_write_start(MPI_Comm comm, int root, hid_t file, const char *tool,
                            int argc, char **argv);
/* Not collective: end_time, then complete = 1 (the last attribute). */
int rb_metadata_write_end(hid_t file);

/* ISO 8601 UTC time, e.g. 2026-11-22T18:45:20Z. */
void rb_utc_now(char *buf, size_t len);

/* Attribute writers: 0 on success, -1 on failure.  Strings are scalar,
 * variable-length UTF-8 (h5py reads them as str); an existing attribute of
 * that name is replaced. */
int rb_h5_attr_str(hid_t obj, const char *name, const char *value);
int rb_h5_attr_int(hid_t obj, const char *name, long long value);
int rb_h5_attr_u64(hid_t obj, const char *name, unsigned long long value);
int rb_h5_attr_double(hid_t obj, const char *name, double value);
int rb_h5_attr_str_array(hid_t obj, const char *name, const char *const *values, size_t n);
int rb_h5_attr_int_array(hid_t obj, const char *name, const int *values, size_t n);
/* Scalar variable-length string dataset (e.g. an XML document). */
int rb_h5_dataset_str(hid_t loc, const char *name, const char *value);
/* Open the group at path, creating it (and missing parents) if needed;
 * H5I_INVALID_HID on failure. */
hid_t rb_h5_group(hid_t file, const char *path);

#endif
