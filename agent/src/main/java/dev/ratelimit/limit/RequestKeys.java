package dev.ratelimit.limit;

/** What an HTTP request tells a key: the values a rule keyed on the request reads. */
public interface RequestKeys {

    /** The client's address key (after trusted proxies and IPv6 grouping). */
    String clientIp();

    /** The first value of the header, or {@code null} when it is missing. */
    String header(String name);

    /** The authenticated principal's name, or {@code null}. */
    String principal();

    /** Whether the request carried a valid internal token. */
    boolean exempt();

    /** Whether the request carried the token header with a value that is not a token (forged). */
    default boolean forged() {
        return false;
    }
}
