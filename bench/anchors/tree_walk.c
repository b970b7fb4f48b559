#include <stdlib.h>
#include "common.h"
volatile long long nodes = 1048576;
static long long walk(const long long *v, long long n, long long i) {
    if (i >= n) return 0;
    return walk(v, n, 2 * i + 1) + v[i] + walk(v, n, 2 * i + 2);
}
int main(void) {
    long long n = nodes, *v = malloc(n * sizeof *v);
    for (long long i = 0; i < n; i++) v[i] = i;
    long long start = now_ns();
    report(walk(v, n, 0), n, start);
    return 0;
}
