/* SHA-256 (FIPS 180-4), small and dependency-free. */
#include "sha256.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const unsigned char *b)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = bb, bb = a, a = t1 + t2;
    }
    h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/* The rest (< 64 bytes) after the full blocks and the padding of a
 * message of len bytes in all, then hex. */
static void sha256_finish(uint32_t h[8], const unsigned char *rest_data, size_t rest, uint64_t len,
                          char out[65])
{
    unsigned char tail[128] = {0};
    memcpy(tail, rest_data, rest);
    tail[rest] = 0x80;
    size_t tl = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = len * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t i = 0; i < tl; i += 64)
        sha256_block(h, tail + i);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", (unsigned)h[i]);
}

void bench_sha256_hex(const unsigned char *data, size_t len, char out[65])
{
    uint32_t h[8];
    memcpy(h, H0, sizeof h);
    size_t full = len / 64 * 64;
    for (size_t i = 0; i < full; i += 64)
        sha256_block(h, data + i);
    sha256_finish(h, data + full, len - full, len, out);
}

int bench_sha256_file(const char *path, char out[65])
{
    out[0] = '\0';
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    uint32_t h[8];
    memcpy(h, H0, sizeof h);
    static unsigned char buf[1 << 16];
    size_t total = 0, got = 0, have = 0;
    while ((got = fread(buf + have, 1, sizeof buf - have, fp)) > 0) {
        have += got;
        size_t full = have / 64 * 64;
        for (size_t i = 0; i < full; i += 64)
            sha256_block(h, buf + i);
        total += full;
        memmove(buf, buf + full, have - full);
        have -= full;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad)
        return -1;
    sha256_finish(h, buf, have, (uint64_t)(total + have), out);
    return 0;
}
