package dev.ratelimit.benchmarks.target;

/** The same body, named by no rule: instrumented by nothing even when the agent is loaded. */
public class PlainTarget {

    public long work(long x) {
        return x * 0x9E3779B97F4A7C15L + 1;
    }
}
