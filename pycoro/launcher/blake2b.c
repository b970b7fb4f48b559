/* BLAKE2b (RFC 7693), unkeyed, 32-byte digests: cache.py's digest(),
   CPython's blake2b(data, digest_size=32).hexdigest(). */
#include <stdio.h>

#include "launcher.h"

static const uint64_t BLAKE2B_IV[8] = {
    UINT64_C(0x6a09e667f3bcc908), UINT64_C(0xbb67ae8584caa73b), UINT64_C(0x3c6ef372fe94f82b),
    UINT64_C(0xa54ff53a5f1d36f1), UINT64_C(0x510e527fade682d1), UINT64_C(0x9b05688c2b3e6c1f),
    UINT64_C(0x1f83d9abfb41bd6b), UINT64_C(0x5be0cd19137e2179),
};
static const unsigned char BLAKE2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static uint64_t rotr64(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

static void blake2b_compress(uint64_t h[8], const unsigned char block[128], uint64_t t, int last) {
    uint64_t v[16], m[16];
    for (int i = 0; i < 16; i++) {
        m[i] = 0;
        for (int j = 7; j >= 0; j--)
            m[i] = (m[i] << 8) | block[8 * i + j];
    }
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = BLAKE2B_IV[i];
    }
    v[12] ^= t;   /* (the counter's high word stays 0: files under 2^64 bytes) */
    if (last)
        v[14] = ~v[14];
#define G(a, b, c, d, x, y)                  \
    do {                                     \
        v[a] = v[a] + v[b] + (x);            \
        v[d] = rotr64(v[d] ^ v[a], 32);      \
        v[c] = v[c] + v[d];                  \
        v[b] = rotr64(v[b] ^ v[c], 24);      \
        v[a] = v[a] + v[b] + (y);            \
        v[d] = rotr64(v[d] ^ v[a], 16);      \
        v[c] = v[c] + v[d];                  \
        v[b] = rotr64(v[b] ^ v[c], 63);      \
    } while (0)
    for (int r = 0; r < 12; r++) {
        const unsigned char *s = BLAKE2B_SIGMA[r];
        G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
#undef G
    for (int i = 0; i < 8; i++)
        h[i] ^= v[i] ^ v[i + 8];
}

/* The digest as lowercase hex (65 bytes with the NUL), as hexdigest() writes it. */
void blake2b_hex(const void *data, size_t size, char hex[65]) {
    uint64_t h[8];
    memcpy(h, BLAKE2B_IV, sizeof h);
    h[0] ^= 0x01010000 ^ 32;   /* depth 1, fanout 1, no key, 32-byte digest */
    const unsigned char *p = data;
    unsigned char block[128];
    uint64_t t = 0;
    while (size > 128) {
        t += 128;
        blake2b_compress(h, p, t, 0);
        p += 128;
        size -= 128;
    }
    memset(block, 0, sizeof block);
    memcpy(block, p, size);
    blake2b_compress(h, block, t + size, 1);
    for (int i = 0; i < 32; i++)
        sprintf(hex + 2 * i, "%02x", (unsigned)((h[i / 8] >> (8 * (i % 8))) & 0xFF));
}

