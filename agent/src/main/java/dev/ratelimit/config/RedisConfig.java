package dev.ratelimit.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/** Where the Redis store keeps its counters. {@link #toString()} masks the URI's password. */
public final class RedisConfig {

    /** How long the application thread waits for Redis unless the rule file says otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(50);
    /** The prefix of every counter key unless the rule file says otherwise. */
    public static final String DEFAULT_KEY_PREFIX = "rl:";
    /** The port of a URI that names none. */
    public static final int DEFAULT_PORT = 6379;
    /** The client takes its timeouts as an {@code int} of milliseconds: under 25 days. */
    static final Duration LONGEST_TIMEOUT = Duration.ofDays(24);

    private final String uri;
    private final Duration timeout;
    private final String keyPrefix;

    /**
     * @param uri a {@code redis://} or {@code rediss://} URI, environment references already substituted
     * @param timeout the longest an application thread waits for Redis
     * @param keyPrefix prepended to every counter key
     */
    public RedisConfig(String uri, Duration timeout, String keyPrefix) {
        String problem = uriProblem(uri);
        if (problem != null) {
            throw new IllegalArgumentException("the redis uri " + problem);
        }
        String timeoutProblem = timeoutProblem(timeout);
        if (timeoutProblem != null) {
            throw new IllegalArgumentException("the redis timeout " + timeoutProblem);
        }
        this.uri = uri;
        this.timeout = timeout;
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
    }

    /**
     * What is wrong with {@code uri} as the client would read it, or {@code null} when nothing is.
     * The text never repeats the URI or any part of it: it may hold a password. A URI the client
     * cannot use must fail here, where the rule file is checked, and not when the store is built
     * (the application would then run without limits, and the client's message names the URI).
     */
    static String uriProblem(String uri) {
        if (uri == null || !(uri.startsWith("redis://") || uri.startsWith("rediss://"))
                || uri.length() <= uri.indexOf("://") + 3) {
            return "must start with redis:// (or rediss:// for TLS) followed by a host, such as redis://127.0.0.1:6379/0";
        }
        URI parsed;
        try {
            parsed = new URI(uri);
        } catch (URISyntaxException e) {
            // the reason names the fault, not the text; the index is a place in the URI, not its content
            return "is not a valid URI (" + e.getReason().toLowerCase(Locale.ROOT) + " at character "
                    + (e.getIndex() + 1) + "); in a user name or password, write / ? # @ % and spaces as"
                    + " %2F %3F %23 %40 %25 %20";
        }
        if (parsed.getHost() == null || parsed.getHost().isEmpty()) {
            return "names no host a client can reach: write redis://[user:password@]host[:port][/database];"
                    + " in a user name or password, write / ? # @ % and spaces as %2F %3F %23 %40 %25 %20";
        }
        if (parsed.getRawUserInfo() != null && parsed.getRawUserInfo().indexOf(':') < 0) {
            // clients disagree on what a lone name is (a user, or a password); this one refuses it
            return "has a user name and no password before the host: write redis://:password@host, or"
                    + " redis://user:password@host";
        }
        if (parsed.getRawUserInfo() != null && parsed.getRawUserInfo().endsWith(":")) {
            // the client would send AUTH with an empty password, which no server accepts
            return "has an empty password: write the password after the ':', or leave out the user"
                    + " information (redis://host) for a server without one";
        }
        if (parsed.getPort() == 0 || parsed.getPort() > 65535) {
            return "has a port out of range (1 to 65535)";
        }
        if (parsed.getRawQuery() != null || parsed.getRawFragment() != null) {
            return "takes no query (?...) or fragment (#...): write redis://[user:password@]host[:port][/database]";
        }
        String path = parsed.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/") && !isDatabaseNumber(path.substring(1))) {
            return "has a path that is not a database number: write /0, /1, ... after the host and port";
        }
        return null;
    }

    private static boolean isDatabaseNumber(String text) {
        if (text.isEmpty() || text.length() > 9) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** What is wrong with {@code timeout} for the client, or {@code null}. */
    static String timeoutProblem(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            return "must be positive";
        }
        if (timeout.compareTo(LONGEST_TIMEOUT) > 0) {
            return "must be at most " + Durations.format(LONGEST_TIMEOUT);
        }
        return null;
    }

    /** The URI, with {@code ${env:...}} references substituted; may hold a password. */
    public String uri() {
        return uri;
    }

    /**
     * The URI the client connects to: {@link #uri()} with the default port added when it names
     * none (the client needs one).
     */
    public URI connectionUri() {
        URI parsed = URI.create(uri);
        if (parsed.getPort() != -1) {
            return parsed;
        }
        String authority = parsed.getRawAuthority();
        String path = parsed.getRawPath() == null ? "" : parsed.getRawPath();
        return URI.create(parsed.getScheme() + "://" + authority + (authority.endsWith(":") ? "" : ":") + DEFAULT_PORT
                + path);
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
