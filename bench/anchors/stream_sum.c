/* bench/workloads/stream_sum.pc as a C loop. */
#include "common.h"
volatile long long items = 100000000;
int main(void) {
    long long n = items, start = now_ns(), s = 0;
    for (long long i = 0; i < n; i++) s += i ^ (i >> 7);
    report(s, n, start);
    return 0;
}
