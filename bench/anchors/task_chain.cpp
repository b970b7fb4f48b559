#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long depth = 1000000;
Task<long long> chain(long long n) {
    if (n == 0) co_return 0;
    long long rest = co_await chain(n - 1);
    co_return rest + 1;
}
int main() {
    long long n = depth, start = now_ns();
    Task<long long> t = chain(n);
    t.h.resume();   // runs to completion: every transfer is a tail call
    report(t.h.promise().value, n, start);
}
