package dev.ratelimit.store;

import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.StoreConfig;
import dev.ratelimit.limit.Limiter;
import dev.ratelimit.limit.LocalLimiter;

/** Makes each rule's limiter in the store the rule file asks for: local (the default) or Redis. */
public final class LimiterFactory implements AutoCloseable {
    private final StoreConfig config;
    private final RedisStore redis;

    private LimiterFactory(StoreConfig config, RedisStore redis) {
        this.config = config;
        this.redis = redis;
    }

    /** The factory for a rule file's {@code store} section; opens the Redis pool if it asks for one. */
    public static LimiterFactory of(StoreConfig store) {
        return new LimiterFactory(store, store.type() == StoreConfig.Type.REDIS ? new RedisStore(store.redis()) : null);
    }

    /**
     * The factory for the {@code store} section of a reloaded rule file: {@code current} itself
     * when it makes the same limiters, so that the rules that did not change keep their counters
     * (and Redis its warm connections); a new one otherwise. The store's {@code on-error} is only
     * each rule's default, which the rules carry, and {@code max-keys} does not apply to Redis:
     * editing them keeps a Redis store. A local store is kept when its {@code max-keys} is.
     */
    public static LimiterFactory forReload(LimiterFactory current, StoreConfig next) {
        StoreConfig now = current.config;
        boolean same = now.type() == next.type() && (next.type() == StoreConfig.Type.REDIS
                ? now.redis().equals(next.redis()) : now.maxKeys() == next.maxKeys());
        return same ? current : of(next);
    }

    public Limiter create(RuleConfig rule) {
        return redis == null ? LocalLimiter.create(rule, config.maxKeys()) : new RedisLimiter(redis, rule);
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }

    /**
     * Closes this factory, which a reload replaced, once the calls that took a rule of it before
     * the reload have ended (see {@link RedisStore#closeAfterCallsInFlight}).
     */
    public void retire() {
        if (redis != null) {
            redis.closeAfterCallsInFlight();
        }
    }
}
