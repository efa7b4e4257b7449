/* The columns of /micro/results and the row's HDF5 type (micro_row.h);
 * every column is a field of micro_row, in the table's order. */
#include "micro_row.h"

#include <stddef.h>

static hid_t name_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, MICRO_NAME_LEN);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    return t;
}

/* Column name, offset, type, units (units attribute, same order). */
#define COL(f, t, u) {#f, offsetof(micro_row, f), t, u}
typedef micro_column column;
enum { T_NAME = MICRO_COL_NAME, T_U64 = MICRO_COL_U64, T_I32 = MICRO_COL_I32, T_I64 = MICRO_COL_I64,
       T_F64 = MICRO_COL_F64 };
static const column columns[] = {
    COL(reducer, T_NAME, ""), COL(layout, T_NAME, ""), COL(overlap, T_NAME, ""),
    COL(device, T_NAME, ""), COL(size_bytes, T_U64, "B"), COL(count, T_U64, "elements"),
    COL(rows, T_U64, ""), COL(cols, T_U64, ""), COL(density, T_F64, "fraction"),
    COL(ranks, T_I32, ""), COL(iters, T_I32, ""), COL(warmup, T_I32, ""),
    COL(t_avg_us, T_F64, "us"), COL(t_min_us, T_F64, "us"), COL(t_max_us, T_F64, "us"),
    COL(t_p50_us, T_F64, "us"), COL(t_p99_us, T_F64, "us"), COL(slowest_rank, T_I32, ""),
    COL(t_encode_us, T_F64, "us"), COL(t_comm_us, T_F64, "us"), COL(t_decode_us, T_F64, "us"),
    COL(algbw_gbs, T_F64, "GB/s"), COL(busbw_gbs, T_F64, "GB/s"),
    COL(bytes_sent_avg, T_F64, "B"), COL(bytes_sent_max, T_F64, "B"),
    COL(bytes_recv_avg, T_F64, "B"), COL(bytes_recv_max, T_F64, "B"),
    COL(nnz_local_avg, T_F64, "elements"), COL(nnz_union, T_F64, "elements"),
    COL(bound_bytes, T_F64, "B"), COL(wire_to_bound, T_F64, "ratio"), COL(checked, T_I32, ""),
    COL(wrong, T_I64, "elements"), COL(rel_l2_err, T_F64, "ratio"), COL(recall, T_F64, "fraction"),
    COL(max_abs_err, T_F64, ""), COL(consensus, T_F64, "ratio"), COL(repeat, T_I32, ""),
    COL(t_model_us, T_F64, "us"), COL(model_ratio, T_F64, "ratio"), COL(input, T_NAME, ""),
    COL(t_floor_us, T_F64, "us"), COL(msgs_sent_avg, T_F64, "messages"),
    COL(msgs_sent_max, T_F64, "messages"), COL(union_rows, T_F64, "rows"),
    COL(union_ratio, T_F64, "ratio"), COL(nnz_local_max, T_F64, "elements"),
    COL(imbalance, T_F64, "ratio"), COL(step, T_I64, ""),
};
#define NCOLUMNS (sizeof columns / sizeof *columns)

const micro_column *micro_columns(size_t *n)
{
    *n = NCOLUMNS;
    return columns;
}

hid_t micro_row_h5type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(micro_row)), nt = name_type();
    const hid_t types[] = {nt, H5T_NATIVE_UINT64, H5T_NATIVE_INT32, H5T_NATIVE_INT64, H5T_NATIVE_DOUBLE};
    for (size_t i = 0; i < NCOLUMNS; i++)
        H5Tinsert(t, columns[i].name, columns[i].off, types[columns[i].type]);
    H5Tclose(nt);
    return t;
}

