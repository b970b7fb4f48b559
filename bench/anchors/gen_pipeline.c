#include "common.h"
volatile long long items = 50000000;
int main(void) {
    long long n = items, start = now_ns(), s = 0, taken = 0;
    for (long long i = 0; i < n && taken < n / 4; i++) {
        long long v = i * 3;
        if (v % 2 == 0) { s += v; taken++; }
    }
    report(s, n / 4, start);
    return 0;
}
