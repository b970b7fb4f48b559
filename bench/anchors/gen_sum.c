#include "common.h"
volatile long long items = 100000000;
int main(void) {
    long long n = items, start = now_ns(), s = 0;
    for (long long i = 0; i < n; i++) {
        s += i;
        __asm__ volatile("" : "+r"(s));   /* an opaque sink: clang would fold the loop */
    }
    report(s, n, start);
    return 0;
}
