package dev.ratelimit.limit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;

/** Where a rule keeps the per-key state of its limits. */
abstract class KeyStore {
    /**
     * How often, as a fraction of the retention, a present key's access is recorded in the
     * cache. The retention is lengthened by as much, so a key in use never expires.
     */
    private static final int RECORD_PARTS = 8;

    /** The state of {@code key}, created on its first call. */
    abstract Object[] state(String key);

    /**
     * Records that {@code key} is over the limits of {@code limits} (bit {@code i}: limit
     * {@code i}; bit 63 also stands for every limit past it) until {@code untilMillis} (wall clock).
     */
    abstract void penalize(String key, long limits, long untilMillis);

    /** Until when {@code key} is remembered as over a limit (wall clock), or 0; for tests. */
    abstract long penaltyUntil(String key);

    abstract long size();

    /** One state for every caller: rules keyed {@code global} need no lookup at all. */
    static KeyStore single(Object[] state) {
        return new Single(state);
    }

    /**
     * States in a Caffeine cache bounded to {@code maxKeys}, dropped {@code retentionMillis} after
     * their last call (their windows are over by then).
     *
     * @param factory makes a key's state, given the limits (a bit mask, as in {@link #penalize})
     *     whose state must start used up
     * @param removed told of each state whose key has left the store, once, on a thread that
     *     uses the store, some time after the key was evicted or expired
     */
    static KeyStore local(long maxKeys, long retentionMillis, LongFunction<Object[]> factory,
            Consumer<Object[]> removed) {
        return new Local(maxKeys, retentionMillis, factory, removed);
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
        void penalize(String key, long limits, long untilMillis) {
            // never evicted: nothing to remember
        }

        @Override
        long penaltyUntil(String key) {
            return 0;
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
     * starts used up in the limits it was over, and only those: a key over a limit of a second
     * must not come back used up in its limit of an hour.
     */
    private static final class Local extends KeyStore {
        private static final int MIN_PENALTIES = 1024;

        private final Cache<String, Slot> states;
        private final Policy<String, Slot> quiet;
        private final long maxPenalties;
        private final long retentionMillis;
        /** Made at the first rejection: a rule that never rejects has no second cache. */
        private volatile Cache<String, Penalty> penalties;
        private final Function<String, Slot> loader;
        private final long recordEveryNanos;

        Local(long maxKeys, long retentionMillis, LongFunction<Object[]> factory, Consumer<Object[]> removed) {
            long retention = Math.max(1, retentionMillis);
            long recordEvery = Math.max(1, retention / RECORD_PARTS);
            this.recordEveryNanos = TimeUnit.MILLISECONDS.toNanos(recordEvery);
            this.states = Caffeine.newBuilder()
                    .maximumSize(maxKeys)
                    // a key's recorded access lags its last call by up to recordEvery
                    .expireAfterAccess(Duration.ofMillis(retention + recordEvery))
                    .ticker(CoarseClock::nanos)
                    // maintenance on the calling threads: no tasks in the host's common pool
                    .executor(Runnable::run)
                    .<String, Slot>removalListener((key, slot, cause) -> {
                        if (slot != null) {
                            removed.accept(slot.state);
                        }
                    })
                    .build();
            this.quiet = states.policy();
            this.maxPenalties = Math.max(MIN_PENALTIES, maxKeys / 4);
            this.retentionMillis = retention;
            this.loader = key -> {
                Cache<String, Penalty> remembered = penalties;
                Penalty penalty = remembered == null ? null : remembered.getIfPresent(key);
                long limits = penalty != null && penalty.untilMillis > CoarseClock.millis() ? penalty.limits : 0;
                return new Slot(factory.apply(limits), CoarseClock.nanos());
            };
        }

        @Override
        Object[] state(String key) {
            // A present key is read quietly: no entry in Caffeine's read buffer, no access time
            // written, so two threads calling with one key share nothing but the key's counter.
            // Its access is recorded (recency, frequency, expiry) at most once per recordEvery.
            Slot slot = quiet.getIfPresentQuietly(key);
            if (slot == null) {
                // the atomic get(key, loader) only for a new key: two threads never create two
                // states for one key
                return states.get(key, loader).state;
            }
            long now = CoarseClock.nanos();
            if (now - slot.recorded >= recordEveryNanos) {
                slot.recorded = now;
                states.getIfPresent(key);
            }
            return slot.state;
        }

        @Override
        void penalize(String key, long limits, long untilMillis) {
            Cache<String, Penalty> penalties = penalties();
            Penalty known = penalties.getIfPresent(key);
            // written only when it says more than before: a key rejected again and again in one
            // window costs a look-up, and allocates nothing
            if (known == null || !known.covers(limits, untilMillis)) {
                // merged atomically: two threads rejected by different limits both leave their bit
                penalties.asMap().merge(key, new Penalty(limits, untilMillis), Penalty::merge);
            }
        }

        @Override
        long penaltyUntil(String key) {
            Cache<String, Penalty> made = penalties;
            Penalty known = made == null ? null : made.getIfPresent(key);
            return known == null ? 0 : known.untilMillis;
        }

        /** The cache of rejected keys, made on first use. */
        private Cache<String, Penalty> penalties() {
            Cache<String, Penalty> made = penalties;
            if (made == null) {
                synchronized (this) {
                    made = penalties;
                    if (made == null) {
                        made = Caffeine.newBuilder()
                                .maximumSize(maxPenalties)
                                .expireAfterWrite(Duration.ofMillis(retentionMillis))
                                .ticker(CoarseClock::nanos)
                                .executor(Runnable::run)
                                .build();
                        penalties = made;
                    }
                }
            }
            return made;
        }

        /** Which limits a key was over, and until when. */
        private static final class Penalty {
            final long limits;
            final long untilMillis;

            Penalty(long limits, long untilMillis) {
                this.limits = limits;
                this.untilMillis = untilMillis;
            }

            boolean covers(long limits, long untilMillis) {
                return this.untilMillis >= untilMillis && (this.limits | limits) == this.limits;
            }

            static Penalty merge(Penalty known, Penalty added) {
                if (known.covers(added.limits, added.untilMillis)) {
                    return known;
                }
                // a penalty that has run out says nothing about the limits now over
                long stillOver = known.untilMillis > CoarseClock.millis() ? known.limits : 0;
                return new Penalty(stillOver | added.limits, Math.max(known.untilMillis, added.untilMillis));
            }
        }

        @Override
        long size() {
            states.cleanUp();
            return states.estimatedSize();
        }
    }

    /** A key's state and when its access was last recorded in the cache. */
    private static final class Slot {
        final Object[] state;
        volatile long recorded;

        Slot(Object[] state, long recorded) {
            this.state = state;
            this.recorded = recorded;
        }
    }
}
