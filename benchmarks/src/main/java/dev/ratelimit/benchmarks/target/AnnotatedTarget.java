package dev.ratelimit.benchmarks.target;

import dev.ratelimit.annotation.RateLimited;

/** The annotation path: an inline rule (named {@code AnnotatedTarget#work}) that always allows. */
public class AnnotatedTarget {

    @RateLimited(limit = 1_000_000_000_000_000_000L, window = "1h")
    public long work(long x) {
        return x * 0x9E3779B97F4A7C15L + 1;
    }
}
