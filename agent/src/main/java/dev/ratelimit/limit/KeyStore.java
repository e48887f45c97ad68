package dev.ratelimit.limit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Predicate;

/** Where a rule keeps the per-key state of its limits. */
abstract class KeyStore {
    /**
     * How often, as a fraction of the retention, a present key's access is recorded in the
     * cache, at most {@link #RECORD_AT_MOST_EVERY_MILLIS} apart. The retention is lengthened by as
     * much, so a key in use never expires.
     */
    private static final int RECORD_PARTS = 8;
    /**
     * A key in use is recorded as used at least once a second: an eighth of an hour's retention
     * (7.5 minutes) let a key called every second be evicted as if idle, its count lost.
     */
    private static final long RECORD_AT_MOST_EVERY_MILLIS = 1000;

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

    /** States kept after an eviction (at or over a limit, or recent), not yet given back; for tests. */
    abstract long keptSize();

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
     * @param spent whether a state is at or over one of its limits now: evicted so, it is kept
     *     (see {@code Local})
     */
    static KeyStore local(long maxKeys, long retentionMillis, LongFunction<Object[]> factory,
            Consumer<Object[]> removed, Predicate<Object[]> spent) {
        return new Local(maxKeys, retentionMillis, factory, removed, spent);
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

        @Override
        long keptSize() {
            return 0;
        }
    }

    /**
     * The bounded store. A bound means eviction, and an eviction that drops the counter of a client
     * at or over its limit would hand it a fresh budget: an attacker who can make up keys could
     * flood the store to get its own key evicted. So the state of a key evicted while at or over
     * one of its limits, or refused within the retention, is kept apart, in a smaller cache, and
     * given back to the key when it returns: its counts, its windows, its bucket, as they were.
     * Only states that cost their caller a whole limit's worth of calls are kept, so a flood of
     * new keys cannot push them out for free.
     *
     * <p>The keys being rejected are also remembered apart (in a cache only rejections write to)
     * with the limits they were over, until their windows end: should a key's state be gone
     * anyway (the kept states' cache full, or an eviction racing the rejection), the key starts
     * used up in those limits, and only those: a key over a limit of a second must not come back
     * used up in its limit of an hour.
     *
     * <p>A key evicted while under all its limits, and not refused within the retention, is kept
     * too, in a third cache, of the latest such evictions: a key in use can be evicted (its use is
     * recorded at most once per {@code recordEvery}, so a key hammered by a burst looks no more
     * used than a flood's keys), and calls that found its state before the eviction still count
     * there; a state made afresh beside it gave the burst a second budget (6 to 14 of a limit of
     * 5, the concurrency audit). Given back when its key returns, as a kept one is, the burst goes
     * on counting on one state. A key that returns only once that many other keys (a sixteenth of
     * {@code maxKeys}, at least {@value #MIN_RECENT}) were evicted under their limits and are not
     * back, or once the retention has passed since its eviction, starts afresh: what it had used
     * of its limits is forgotten.
     */
    private static final class Local extends KeyStore {
        private static final int MIN_PENALTIES = 1024;
        private static final int MIN_RECENT = 1024;

        private final Cache<String, Slot> states;
        private final Policy<String, Slot> quiet;
        private final long maxPenalties;
        private final long retentionMillis;
        private final Consumer<Object[]> removed;
        /** Made at the first rejection: a rule that never rejects has no second cache. */
        private volatile Cache<String, Penalty> penalties;
        /** States evicted at or over a limit, until their key returns; made at the first one. */
        private volatile Cache<String, Kept> kept;
        /** The latest states evicted under all their limits, until their key returns; made at the first one. */
        private volatile Recent recent;
        private final long maxRecent;
        private final Function<String, Slot> loader;
        private final long recordEveryNanos;

        Local(long maxKeys, long retentionMillis, LongFunction<Object[]> factory, Consumer<Object[]> removed,
                Predicate<Object[]> spent) {
            long retention = Math.max(1, retentionMillis);
            long recordEvery = Math.max(1, Math.min(RECORD_AT_MOST_EVERY_MILLIS, retention / RECORD_PARTS));
            this.recordEveryNanos = TimeUnit.MILLISECONDS.toNanos(recordEvery);
            this.removed = removed;
            this.states = Caffeine.newBuilder()
                    .maximumSize(maxKeys)
                    // a key's recorded access lags its last call by up to recordEvery
                    .expireAfterAccess(Duration.ofMillis(retention + recordEvery))
                    .ticker(CoarseClock::nanos)
                    // maintenance on the calling threads: no tasks in the host's common pool
                    .executor(Runnable::run)
                    // in the atomic step that evicts the key, so that a call making the key's
                    // state again right after finds the kept one
                    .<String, Slot>evictionListener((key, slot, cause) -> {
                        if (slot != null && cause == RemovalCause.SIZE) {
                            slot.kept = true;
                            if (spent.test(slot.state) || penaltyUntil(key) != 0) {
                                kept().put(key, new Kept(slot.state));
                            } else {
                                recent().put(key, slot.state);
                            }
                        }
                    })
                    .removalListener((key, slot, cause) -> {
                        if (slot != null && !slot.kept) {
                            removed.accept(slot.state);
                        }
                    })
                    .build();
            this.quiet = states.policy();
            this.maxPenalties = Math.max(MIN_PENALTIES, maxKeys / 4);
            this.maxRecent = Math.max(MIN_RECENT, maxKeys / 16);
            this.retentionMillis = retention;
            this.loader = key -> {
                Cache<String, Kept> keptStates = kept;
                Kept keptState = keptStates == null ? null : keptStates.getIfPresent(key);
                Object[] back = keptState == null ? null : keptState.take();
                if (back != null) {
                    keptStates.asMap().remove(key, keptState);
                    return new Slot(back, CoarseClock.nanos());
                }
                Recent recentStates = recent;
                back = recentStates == null ? null : recentStates.take(key);
                if (back != null) {
                    return new Slot(back, CoarseClock.nanos());
                }
                Cache<String, Penalty> remembered = penalties;
                Penalty penalty = remembered == null ? null : remembered.getIfPresent(key);
                long limits = penalty != null && penalty.untilMillis > CoarseClock.millis() ? penalty.limits : 0;
                return new Slot(factory.apply(limits), CoarseClock.nanos());
            };
        }

        /**
         * A builder for the caches beside the store's: a quarter of its size, and an entry kept
         * for the retention after it was written (a state, or a penalty, says nothing once the
         * windows it was written in are over).
         */
        private Caffeine<Object, Object> sideCache(long maxSize) {
            return Caffeine.newBuilder()
                    .maximumSize(maxSize)
                    .expireAfterWrite(Duration.ofMillis(retentionMillis))
                    .ticker(CoarseClock::nanos)
                    .executor(Runnable::run);
        }

        /** The cache of states evicted at or over a limit, made on first use. */
        private Cache<String, Kept> kept() {
            Cache<String, Kept> made = kept;
            if (made == null) {
                synchronized (this) {
                    made = kept;
                    if (made == null) {
                        made = sideCache(maxPenalties).<String, Kept>removalListener((key, state, cause) -> {
                                    Object[] dropped = state == null ? null : state.take();
                                    if (dropped != null) {
                                        removed.accept(dropped);
                                    }
                                })
                                .build();
                        kept = made;
                    }
                }
            }
            return made;
        }

        /** The latest states evicted under all their limits, made on first use. */
        private Recent recent() {
            Recent made = recent;
            if (made == null) {
                synchronized (this) {
                    made = recent;
                    if (made == null) {
                        made = new Recent(maxRecent, TimeUnit.MILLISECONDS.toNanos(retentionMillis), removed);
                        recent = made;
                    }
                }
            }
            return made;
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
                        made = sideCache(maxPenalties).build();
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

        @Override
        long keptSize() {
            Cache<String, Kept> made = kept;
            Recent latest = recent;
            long keptStates = 0;
            if (made != null) {
                made.cleanUp();
                keptStates = made.estimatedSize();
            }
            return keptStates + (latest == null ? 0 : latest.size());
        }
    }

    /**
     * The latest states evicted under all their limits, by key, at most {@code maxSize}, the
     * oldest dropped (and closed) first: in the order of their evictions, not by a cache's
     * admission policy, which turned away the newest state when a flood's states were as often
     * used. A state is dropped too once the retention has passed since its eviction, as a kept one
     * is: its windows are over, and without it the latest evictions stayed (and stayed open in an
     * {@link AllowedTally}) however long ago they were.
     *
     * <p>Touched only by evictions ({@link #put}) and by the making of a key's state
     * ({@link #take}), never by a call on a present key. A take that finds nothing, as nearly
     * every one in a flood of new keys does, is one look-up in a concurrent map and takes no lock:
     * a lock there cost a third of the store's new keys a second on two threads (the review of the
     * fixes). The order is kept under this object's lock, by puts and by the takes that find a state.
     */
    private static final class Recent {
        private final Map<String, Evicted> byKey = new java.util.concurrent.ConcurrentHashMap<>();
        /**
         * The same states, oldest eviction first; under this object's lock. Each put drops the
         * eldest if there are too many, or if it was evicted a retention or more ago.
         */
        private final java.util.LinkedHashMap<String, Evicted> inOrder;
        private final long retentionNanos;
        private final Consumer<Object[]> removed;
        /** The time of the put under way, for {@code inOrder}'s look at its eldest. */
        private long putNanos;
        /**
         * The time ({@link CoarseClock#nanos}) from which a state here may have been evicted a
         * retention or more ago: never later than that, sometimes earlier (an eldest dropped or
         * taken leaves it as it was); written under this object's lock. A take reads it without
         * the lock, and drops those states once it has passed: with only puts dropping them, one
         * at a time, they stayed once evictions stopped (a flood over, its keys expired, the store
         * no longer full), and a key returning long after got its old state.
         */
        private volatile long expireFromNanos;

        Recent(long maxSize, long retentionNanos, Consumer<Object[]> removed) {
            this.retentionNanos = retentionNanos;
            this.removed = removed;
            this.inOrder = new java.util.LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Evicted> eldest) {
                    Evicted oldest = eldest.getValue();
                    if (size() > maxSize || putNanos - oldest.evictedNanos >= Recent.this.retentionNanos) {
                        byKey.remove(oldest.key, oldest);
                        close(oldest);
                        return true;
                    }
                    return false;
                }
            };
        }

        void put(String key, Object[] state) {
            long now = CoarseClock.nanos();
            Evicted evicted = new Evicted(key, state, now);
            synchronized (this) {
                // a key's state is taken from here when the key's state is made again, so none is
                // here twice; should one be, the older goes, closed
                Evicted older = inOrder.remove(key);
                if (inOrder.isEmpty()) {
                    expireFromNanos = now + retentionNanos;
                }
                byKey.put(key, evicted);
                putNanos = now;
                inOrder.put(key, evicted);
                close(older);
            }
        }

        /** The key's state, now no longer here; null if none (or being dropped this instant). */
        Object[] take(String key) {
            long now = CoarseClock.nanos();
            if (now - expireFromNanos >= 0) {
                synchronized (this) {
                    expire(now);
                }
            }
            // a plain read first: a miss takes not even the map's bin lock
            Evicted back = byKey.get(key);
            if (back == null || !byKey.remove(key, back)) {
                return null;
            }
            synchronized (this) {
                inOrder.remove(key, back);
            }
            return back.claim();
        }

        /** The states here now, after those evicted a retention or more ago are dropped. */
        synchronized long size() {
            expire(CoarseClock.nanos());
            return inOrder.size();
        }

        /** Drops (and closes) the states evicted a retention or more ago: the oldest come first. */
        private void expire(long now) {
            while (!inOrder.isEmpty()) {
                Evicted oldest = inOrder.values().iterator().next();
                if (now - oldest.evictedNanos < retentionNanos) {
                    expireFromNanos = oldest.evictedNanos + retentionNanos;
                    return;
                }
                drop(oldest);
            }
            // none here: the next put sets it; until then a take looks once a retention
            expireFromNanos = now + retentionNanos;
        }

        private void drop(Evicted evicted) {
            inOrder.remove(evicted.key, evicted);
            byKey.remove(evicted.key, evicted);
            close(evicted);
        }

        private void close(Evicted evicted) {
            Object[] state = evicted == null ? null : evicted.claim();
            if (state != null) {
                removed.accept(state);
            }
        }

        /** A state, its key, and when it was evicted ({@link CoarseClock#nanos}); given back or closed, once. */
        @SuppressWarnings("serial") // never serialized
        private static final class Evicted extends AtomicReference<Object[]> {
            final String key;
            final long evictedNanos;

            Evicted(String key, Object[] state, long evictedNanos) {
                super(state);
                this.key = key;
                this.evictedNanos = evictedNanos;
            }

            /** The state, to the first that asks (a take, or the drop that closes it); null after. */
            Object[] claim() {
                return getAndSet(null);
            }
        }
    }

    /** An evicted state, given back to its key once (or closed when dropped). */
    private static final class Kept {
        private final AtomicReference<Object[]> state;

        Kept(Object[] state) {
            this.state = new AtomicReference<>(state);
        }

        /** The state, to the one caller that takes it first; null after. */
        Object[] take() {
            return state.getAndSet(null);
        }
    }

    /** A key's state and when its access was last recorded in the cache. */
    private static final class Slot {
        final Object[] state;
        volatile long recorded;
        /** Set when the state was kept at its eviction: then it is not closed. */
        volatile boolean kept;

        Slot(Object[] state, long recorded) {
            this.state = state;
            this.recorded = recorded;
        }
    }
}
