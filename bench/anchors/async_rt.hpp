// A minimal single-threaded C++20 executor for the async anchors: tasks that
// free themselves, a FIFO ready queue, bounded channels (as std/async).
#include <coroutine>
#include <cstddef>
#include <deque>

inline std::deque<std::coroutine_handle<>> ready;

struct Spawned {   // fire and forget: queued when created, frees itself at the end
    struct promise_type {
        Spawned get_return_object() { return {}; }
        auto initial_suspend() {
            struct Queue {
                bool await_ready() { return false; }
                void await_suspend(std::coroutine_handle<> h) { ready.push_back(h); }
                void await_resume() {}
            };
            return Queue{};
        }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() {}
        void unhandled_exception() {}
    };
};

struct Wait {      // park on a queue until woken
    std::deque<std::coroutine_handle<>>& queue;
    bool await_ready() { return false; }
    void await_suspend(std::coroutine_handle<> h) { queue.push_back(h); }
    void await_resume() {}
};

inline Wait yield_now() { return Wait{ready}; }

inline void wake(std::deque<std::coroutine_handle<>>& q) {
    if (!q.empty()) { ready.push_back(q.front()); q.pop_front(); }
}

template <class T> struct Channel {
    std::deque<T> values;
    std::size_t capacity;
    std::deque<std::coroutine_handle<>> receivers, senders;
};

inline void run() {
    while (!ready.empty()) { auto h = ready.front(); ready.pop_front(); h.resume(); }
}
