// A million tasks, each yields once, then adds its number.
#include "async_rt.hpp"
extern "C" {
#include "common.h"
}
volatile long long tasks = 1000000;
long long total;

Spawned one(long long i) {
    co_await yield_now();
    total += i;
}

int main() {
    long long n = tasks, start = now_ns();
    for (long long i = 0; i < n; i++) one(i);
    run();
    report(total, n, start);
}
