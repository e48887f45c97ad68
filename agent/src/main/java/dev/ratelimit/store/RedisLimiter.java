package dev.ratelimit.store;

import dev.ratelimit.config.Algorithm;
import dev.ratelimit.config.Durations;
import dev.ratelimit.config.LimitSpec;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.limit.Decisions;
import dev.ratelimit.limit.Limiter;
import dev.ratelimit.limit.Outcome;
import java.util.ArrayList;
import java.util.List;

/**
 * A rule's limits kept in Redis, shared by every instance: one script call per decision does
 * every limit of the rule atomically on the server, and the numbers it returns decide, through
 * the same {@link Decisions} as the local store. A call one limit rejects uses up none of the
 * others, as in the local store: the script takes it back out of them.
 *
 * <p>Keys: {@code PREFIX{RULE|KEY}:ALGORITHM:WINDOW}. The braces are a Redis Cluster hash tag, so
 * all limits of one rule and key live in one slot and one script may touch them together.
 */
public final class RedisLimiter implements Limiter {
    private final RedisStore store;
    private final Algorithm algorithm;
    private final RedisScript script;
    private final long[] limits;
    private final long[] windowsMillis;
    private final String[] suffixes;
    /** Token buckets only: each limit's capacity and emission interval, in microseconds. */
    private final long[] bucketCapacities;
    private final long[] bucketIntervals;
    private final List<String> args;
    private final String keyStart;

    public RedisLimiter(RedisStore store, RuleConfig rule) {
        this.store = store;
        this.algorithm = rule.algorithm();
        List<LimitSpec> specs = rule.limits();
        this.limits = new long[specs.size()];
        this.windowsMillis = new long[specs.size()];
        this.suffixes = new String[specs.size()];
        this.bucketCapacities = new long[specs.size()];
        this.bucketIntervals = new long[specs.size()];
        List<String> arguments = new ArrayList<>();
        for (int i = 0; i < limits.length; i++) {
            limits[i] = specs.get(i).limit();
            windowsMillis[i] = specs.get(i).window().toMillis();
            suffixes[i] = "}:" + algorithm.yamlName() + ":" + Durations.format(specs.get(i).window());
            if (algorithm == Algorithm.TOKEN_BUCKET) {
                long windowMicros = windowsMillis[i] * 1000L;
                bucketCapacities[i] = Decisions.tokenBucketCapacity(windowMicros, limits[i]);
                bucketIntervals[i] = Decisions.tokenBucketInterval(windowMicros, limits[i]);
                arguments.add(Long.toString(bucketCapacities[i]));
                arguments.add(Long.toString(bucketIntervals[i]));
            } else {
                arguments.add(Long.toString(windowsMillis[i]));
            }
        }
        if (algorithm != Algorithm.TOKEN_BUCKET) {
            // the script takes a rejected call back out of the counts: it needs the limits
            for (long limit : limits) {
                arguments.add(Long.toString(limit));
            }
        }
        this.args = List.copyOf(arguments);
        this.script = algorithm == Algorithm.SLIDING_WINDOW ? store.slidingWindow
                : algorithm == Algorithm.TOKEN_BUCKET ? store.tokenBucket : store.fixedWindow;
        // "|" cannot be in a rule name: rule "a" with key "b:c" and rule "a:b" with key "c" stay apart
        this.keyStart = store.keyPrefix() + "{" + rule.name() + "|";
    }

    @Override
    public long acquire(String key) {
        List<String> keys = new ArrayList<>(suffixes.length);
        String tagged = keyStart + (key == null ? "*" : key);
        for (String suffix : suffixes) {
            keys.add(tagged + suffix);
        }
        List<Long> reply = store.eval(script, keys, args);
        long outcome = Long.MAX_VALUE;
        for (int i = 0; i < limits.length; i++) {
            outcome = Outcome.combine(outcome, decide(reply, i));
        }
        return outcome;
    }

    private long decide(List<Long> reply, int i) {
        switch (algorithm) {
            case SLIDING_WINDOW:
                return Decisions.slidingWindow(reply.get(3 * i), reply.get(3 * i + 1), reply.get(3 * i + 2),
                        limits[i], windowsMillis[i]);
            case TOKEN_BUCKET:
                return Decisions.tokenBucketMicros(reply.get(i), bucketCapacities[i], bucketIntervals[i]);
            default:
                return Decisions.fixedWindow(reply.get(2 * i), limits[i], reply.get(2 * i + 1));
        }
    }

    /** Redis keeps the keys; counting them would cost a scan. */
    @Override
    public long trackedKeys() {
        return -1;
    }
}
