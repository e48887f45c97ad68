package dev.ratelimit.benchmarks.target;

/**
 * The YAML pattern path: {@code instrumented-call.yaml} names
 * {@code dev.ratelimit.benchmarks.target.PatternTarget#work} in the rule {@code bench-pattern}.
 */
public class PatternTarget {

    public long work(long x) {
        return x * 0x9E3779B97F4A7C15L + 1;
    }
}
