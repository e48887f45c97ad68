package dev.ratelimit.config;

import java.util.Objects;

/** Where counters are kept, how many, and what a rule does when the store cannot answer. */
public final class StoreConfig {

    /** The kinds of store. */
    public enum Type {
        /** In-process counters; the default. */
        LOCAL("local"),
        /** Counters shared by every instance through Redis. */
        REDIS("redis");

        private final String yamlName;

        Type(String yamlName) {
            this.yamlName = yamlName;
        }

        /** The spelling used in the rule file. */
        public String yamlName() {
            return yamlName;
        }

        /** The constant spelled {@code text} in the rule file, or null when there is none. */
        public static Type fromYaml(String text) {
            for (Type value : values()) {
                if (value.yamlName.equals(text)) {
                    return value;
                }
            }
            return null;
        }
    }

    /** Counters kept per rule unless the rule file says otherwise. */
    public static final long DEFAULT_MAX_KEYS = 100_000;

    private static final StoreConfig DEFAULT = new StoreConfig(Type.LOCAL, DEFAULT_MAX_KEYS, OnError.ALLOW, null);

    private final Type type;
    private final long maxKeys;
    private final OnError onError;
    private final RedisConfig redis;

    /**
     * @param type the kind of store
     * @param maxKeys counters kept per rule at most; positive
     * @param onError what rules do by default when the store cannot answer in time
     * @param redis the Redis settings, or null when the rule file has none
     */
    public StoreConfig(Type type, long maxKeys, OnError onError, RedisConfig redis) {
        if (maxKeys <= 0) {
            throw new IllegalArgumentException("max-keys must be positive, got " + maxKeys);
        }
        if (type == Type.REDIS && redis == null) {
            throw new IllegalArgumentException("a redis store needs redis settings");
        }
        this.type = Objects.requireNonNull(type, "type");
        this.maxKeys = maxKeys;
        this.onError = Objects.requireNonNull(onError, "onError");
        this.redis = redis;
    }

    /** A local store of 100000 keys per rule that lets calls through on error. */
    public static StoreConfig defaults() {
        return DEFAULT;
    }

    /** The kind of store (default local). */
    public Type type() {
        return type;
    }

    /** Counters kept per rule at most; least recently used go first (default 100000). */
    public long maxKeys() {
        return maxKeys;
    }

    /** What rules do by default when the store cannot answer in time (default allow). */
    public OnError onError() {
        return onError;
    }

    /** The Redis settings, or null when the rule file has none. */
    public RedisConfig redis() {
        return redis;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof StoreConfig)) {
            return false;
        }
        StoreConfig that = (StoreConfig) other;
        return type == that.type && maxKeys == that.maxKeys && onError == that.onError
                && Objects.equals(redis, that.redis);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, maxKeys, onError, redis);
    }

    /** {@code local, max-keys 100000, on-error allow}, with the masked Redis settings when given. */
    @Override
    public String toString() {
        return type.yamlName() + ", max-keys " + maxKeys + ", on-error " + onError.yamlName()
                + (redis == null ? "" : ", redis " + redis);
    }
}
