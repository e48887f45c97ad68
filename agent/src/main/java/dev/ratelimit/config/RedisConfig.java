package dev.ratelimit.config;

import java.time.Duration;
import java.util.Objects;

/** Where the Redis store keeps its counters. {@link #toString()} masks the URI's password. */
public final class RedisConfig {

    /** How long the application thread waits for Redis unless the rule file says otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(50);
    /** The prefix of every counter key unless the rule file says otherwise. */
    public static final String DEFAULT_KEY_PREFIX = "rl:";

    private final String uri;
    private final Duration timeout;
    private final String keyPrefix;

    /**
     * @param uri a {@code redis://} or {@code rediss://} URI, environment references already substituted
     * @param timeout the longest an application thread waits for Redis
     * @param keyPrefix prepended to every counter key
     */
    public RedisConfig(String uri, Duration timeout, String keyPrefix) {
        if (!isRedisUri(uri)) {
            throw new IllegalArgumentException("the redis uri must start with redis:// or rediss://");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the redis timeout must be positive");
        }
        this.uri = uri;
        this.timeout = timeout;
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
    }

    static boolean isRedisUri(String uri) {
        return uri != null && (uri.startsWith("redis://") || uri.startsWith("rediss://"))
                && uri.length() > uri.indexOf("://") + 3;
    }

    /** The URI, with {@code ${env:...}} references substituted; may hold a password. */
    public String uri() {
        return uri;
    }

    /** The longest an application thread waits for Redis (default 50ms). */
    public Duration timeout() {
        return timeout;
    }

    /** Prepended to every counter key (default {@code rl:}). */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** The URI with any password (the whole user info when it has no colon) replaced by {@code ****}. */
    public String maskedUri() {
        int schemeEnd = uri.indexOf("://") + 3;
        int authorityEnd = uri.length();
        for (char end : new char[] {'/', '?', '#'}) {
            int index = uri.indexOf(end, schemeEnd);
            if (index >= 0 && index < authorityEnd) {
                authorityEnd = index;
            }
        }
        int at = uri.lastIndexOf('@', authorityEnd - 1);
        if (at < schemeEnd) {
            return uri;
        }
        // Without a colon, clients such as Lettuce read the whole user info as the password.
        int colon = uri.indexOf(':', schemeEnd);
        String user = colon >= 0 && colon < at ? uri.substring(schemeEnd, colon + 1) : "";
        return uri.substring(0, schemeEnd) + user + "****" + uri.substring(at);
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof RedisConfig)) {
            return false;
        }
        RedisConfig that = (RedisConfig) other;
        return uri.equals(that.uri) && timeout.equals(that.timeout) && keyPrefix.equals(that.keyPrefix);
    }

    @Override
    public int hashCode() {
        return Objects.hash(uri, timeout, keyPrefix);
    }

    /** {@code redis://user:****@host:6379/0, timeout 50ms, key-prefix rl:}. */
    @Override
    public String toString() {
        return maskedUri() + ", timeout " + Durations.format(timeout) + ", key-prefix " + keyPrefix;
    }
}
