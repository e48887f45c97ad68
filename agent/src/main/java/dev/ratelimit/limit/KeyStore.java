package dev.ratelimit.limit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.function.Function;

/** Where a rule keeps the per-key state of its limits. */
abstract class KeyStore {

    /** The state of {@code key}, created on its first call. */
    abstract Object[] state(String key);

    /** Records that {@code key} is over its limit until {@code untilMillis} (wall clock). */
    abstract void penalize(String key, long untilMillis);

    abstract long size();

    /** One state for every caller: rules keyed {@code global} need no lookup at all. */
    static KeyStore single(Object[] state) {
        return new Single(state);
    }

    /**
     * States in a Caffeine cache bounded to {@code maxKeys}, dropped {@code retentionMillis} after
     * their last call (their windows are over by then).
     *
     * @param factory makes a key's state; {@code true} asks for one that starts used up
     */
    static KeyStore local(long maxKeys, long retentionMillis, Function<Boolean, Object[]> factory) {
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
        void penalize(String key, long untilMillis) {
            // never evicted: nothing to remember
        }

        @Override
        long size() {
            return 1;
        }
    }

    /**
     * The bounded store. A bound means eviction, and an eviction that drops the counter of a client
     * over its limit would hand it a fresh budget: an attacker who can make up keys could flood the
     * store to get its own key evicted. So the keys being rejected are also remembered apart, in a
     * smaller cache that only rejections write to (each costing the attacker a whole limit's worth
     * of calls), until their windows end; a key whose state is created again while remembered
     * starts used up.
     */
    private static final class Local extends KeyStore {
        private static final int MIN_PENALTIES = 1024;

        private final Cache<String, Object[]> states;
        private final Cache<String, Long> penalties;
        private final Function<String, Object[]> loader;

        Local(long maxKeys, long retentionMillis, Function<Boolean, Object[]> factory) {
            Duration retention = Duration.ofMillis(Math.max(1, retentionMillis));
            this.states = Caffeine.newBuilder()
                    .maximumSize(maxKeys)
                    .expireAfterAccess(retention)
                    .ticker(CoarseClock::nanos)
                    // maintenance on the calling threads: no tasks in the host's common pool
                    .executor(Runnable::run)
                    .build();
            this.penalties = Caffeine.newBuilder()
                    .maximumSize(Math.max(MIN_PENALTIES, maxKeys / 4))
                    .expireAfterWrite(retention)
                    .ticker(CoarseClock::nanos)
                    .executor(Runnable::run)
                    .build();
            this.loader = key -> {
                Long until = penalties.getIfPresent(key);
                return factory.apply(until != null && until > CoarseClock.millis());
            };
        }

        @Override
        Object[] state(String key) {
            // read-only on the hot path; the atomic get(key, loader) only for a new key, so two
            // threads never create two states for one key
            Object[] state = states.getIfPresent(key);
            return state != null ? state : states.get(key, loader);
        }

        @Override
        void penalize(String key, long untilMillis) {
            Long known = penalties.getIfPresent(key);
            if (known == null || known < untilMillis) {
                penalties.put(key, untilMillis);
            }
        }

        @Override
        long size() {
            states.cleanUp();
            return states.estimatedSize();
        }
    }
}
