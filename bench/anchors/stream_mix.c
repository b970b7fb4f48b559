/* bench/workloads/stream_mix.pc as a C loop. */
#include "common.h"
volatile long long items = 100000000;
int main(void) {
    long long n = items, start = now_ns(), s = 0, made = 0;
    for (long long i = 0; made < n; i++) {
        s += i ^ (i >> 7); made++;
        if (made < n && i % 3 == 0) { long long v = i * 5; s += v ^ (v >> 7); made++; }
        if (made < n && i % 5 == 0) { long long v = -i; s += v ^ (v >> 7); made++; }
    }
    report(s, n, start);
    return 0;
}
