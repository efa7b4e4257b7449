/* SHA-256 of a buffer or a file, as lowercase hex: the provenance hashes
 * the archives record (a simulated platform, a replayed gradient trace). */
#ifndef BENCH_SHA256_H
#define BENCH_SHA256_H

#include <stddef.h>

void bench_sha256_hex(const unsigned char *data, size_t len, char out[65]);
/* 0, or -1 when the file cannot be read (out is then ""). */
int bench_sha256_file(const char *path, char out[65]);

#endif
