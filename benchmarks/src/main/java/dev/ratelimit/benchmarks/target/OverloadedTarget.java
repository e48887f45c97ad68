package dev.ratelimit.benchmarks.target;

/**
 * A rule that can nest: {@code instrumented-call.yaml} binds the rule {@code bench-overloads} to
 * both overloads of {@code work}, so each call keeps its rule on the thread's call stack (a call
 * of one from the other would not count again). The benchmark calls the first one only.
 */
public class OverloadedTarget {

    public long work(long x) {
        return x * 0x9E3779B97F4A7C15L + 1;
    }

    public long work(long x, int times) {
        return x * times;
    }
}
