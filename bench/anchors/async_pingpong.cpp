// Two tasks pass a counter back and forth through one-slot channels.
#include "async_rt.hpp"
extern "C" {
#include "common.h"
}
volatile long long rounds = 5000000;
long long result;

Spawned pong(Channel<long long>& in, Channel<long long>& out, long long n) {
    for (long long i = 0; i < n; i++) {
        while (in.values.empty()) co_await Wait{in.receivers};
        long long v = in.values.front(); in.values.pop_front(); wake(in.senders);
        while (out.values.size() == out.capacity) co_await Wait{out.senders};
        out.values.push_back(v + 1); wake(out.receivers);
    }
}

Spawned ping(Channel<long long>& out, Channel<long long>& in, long long n) {
    long long v = 0;
    for (long long i = 0; i < n; i++) {
        while (out.values.size() == out.capacity) co_await Wait{out.senders};
        out.values.push_back(v); wake(out.receivers);
        while (in.values.empty()) co_await Wait{in.receivers};
        v = in.values.front(); in.values.pop_front(); wake(in.senders);
    }
    result = v;
}

int main() {
    long long n = rounds, start = now_ns();
    Channel<long long> a{{}, 1, {}, {}}, b{{}, 1, {}, {}};
    pong(a, b, n);
    ping(a, b, n);
    run();
    report(result, 2 * n, start);   // a switch: one task hands over to the other
}
