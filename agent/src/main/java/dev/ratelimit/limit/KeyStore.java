package dev.ratelimit.limit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

/** Where a rule keeps the per-key state of its limits. */
abstract class KeyStore {

    /** The state of {@code key}, created on its first call. */
    abstract Object[] state(String key);

    abstract long size();

    /** One state for every caller: rules keyed {@code global} need no lookup at all. */
    static KeyStore single(Supplier<Object[]> factory) {
        return new Single(factory.get());
    }

    /**
     * States in a Caffeine cache bounded to {@code maxKeys}, least recently used first out,
     * dropped {@code retentionMillis} after their last call (their windows are over by then).
     */
    static KeyStore local(long maxKeys, long retentionMillis, Supplier<Object[]> factory) {
        return new Local(maxKeys, retentionMillis, factory);
    }

    private static final class Single extends KeyStore {
        private final Object[] state;

        Single(Object[] state) {
            this.state = state;
        }

        @Override
        Object[] state(String key) {
            return state;
        }

        @Override
        long size() {
            return 1;
        }
    }

    private static final class Local extends KeyStore {
        private final Cache<String, Object[]> cache;
        private final Function<String, Object[]> loader;

        Local(long maxKeys, long retentionMillis, Supplier<Object[]> factory) {
            this.cache = Caffeine.newBuilder()
                    .maximumSize(maxKeys)
                    .expireAfterAccess(Duration.ofMillis(Math.max(1, retentionMillis)))
                    .ticker(CoarseClock::nanos)
                    // maintenance on the calling threads: no tasks in the host's common pool
                    .executor(Runnable::run)
                    .build();
            this.loader = key -> factory.get();
        }

        @Override
        Object[] state(String key) {
            // read-only on the hot path; the atomic get(key, loader) only for a new key, so two
            // threads never create two states for one key
            Object[] state = cache.getIfPresent(key);
            return state != null ? state : cache.get(key, loader);
        }

        @Override
        long size() {
            return cache.estimatedSize();
        }
    }
}
