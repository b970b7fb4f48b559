#include <stdlib.h>
#include "common.h"
volatile long long count = 10000000, passes = 10;
static double total(const double *xs, long long n) {
    double s = 0.0;
    for (long long i = 0; i < n; i++) s += xs[i];
    return s;
}
int main(void) {
    long long n = count, k = passes;
    double *data = malloc(n * sizeof(double));
    for (long long i = 0; i < n; i++) data[i] = (double)(i % 1000);
    long long start = now_ns();
    double s = 0.0;
    for (long long p = 0; p < k; p++) s += total(data + p, n - p);
    report((long long)s, n * k, start);
    return 0;
}
