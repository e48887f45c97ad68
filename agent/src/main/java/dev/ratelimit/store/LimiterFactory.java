package dev.ratelimit.store;

import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.StoreConfig;
import dev.ratelimit.limit.Limiter;
import dev.ratelimit.limit.LocalLimiter;

/** Makes each rule's limiter in the store the rule file asks for: local (the default) or Redis. */
public final class LimiterFactory implements AutoCloseable {
    private final long maxKeys;
    private final RedisStore redis;

    private LimiterFactory(long maxKeys, RedisStore redis) {
        this.maxKeys = maxKeys;
        this.redis = redis;
    }

    /** The factory for a rule file's {@code store} section; opens the Redis pool if it asks for one. */
    public static LimiterFactory of(StoreConfig store) {
        return new LimiterFactory(store.maxKeys(),
                store.type() == StoreConfig.Type.REDIS ? new RedisStore(store.redis()) : null);
    }

    public Limiter create(RuleConfig rule) {
        return redis == null ? LocalLimiter.create(rule, maxKeys) : new RedisLimiter(redis, rule);
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }
}
