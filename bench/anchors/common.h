/* Shared by the C and C++ anchors: the same clock and report as bench/workloads/clock.pc. */
#include <stdio.h>
#include <time.h>
static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static void report(long long checksum, long long items, long long start) {
    long long elapsed = now_ns() - start;
    printf("checksum %lld\nns_per_item %f\n", checksum, (double)elapsed / (double)items);
}
