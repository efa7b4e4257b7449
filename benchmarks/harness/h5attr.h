/* HDF5 helpers every archive writer uses: typed attributes, a string
 * dataset, a group opened or created by path.  The bottom of the harness:
 * it includes nothing of reducerbench's own, so any file may call it. */
#ifndef RB_H5ATTR_H
#define RB_H5ATTR_H

#include <hdf5.h>
#include <stddef.h>

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
