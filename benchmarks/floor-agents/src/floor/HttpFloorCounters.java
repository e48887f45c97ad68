package floor;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The HTTP floor's limiter ({@link HttpFloorAgent}): one atomic counter per client in a
 * concurrent map, counted first (the count the increment returns decides), no windows and no
 * bound on the keys. Loaded from the bootstrap class path, so that advice inlined into any class
 * sees it; JDK types only.
 */
public final class HttpFloorCounters {
    static final String POLICY = "\"api-per-ip\";q=1000000000000000;w=60";
    private static final long LIMIT = 1_000_000_000_000_000L;
    private static final long WINDOW_MILLIS = 60_000;
    private static final byte[] TOKEN = token();
    private static final ConcurrentHashMap<String, AtomicLong> COUNTS = new ConcurrentHashMap<>();

    private HttpFloorCounters() {
    }

    private static byte[] token() {
        String token = System.getenv("RATELIMIT_INTERNAL_TOKEN");
        return token == null ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Counts a request of the client and returns its {@code RateLimit} item, or null when the
     * request carries the internal token (exempt: not counted, no fields).
     *
     * @param peer the remote address
     * @param forwardedFor the {@code X-Forwarded-For} header (the peer is a trusted proxy in the
     *     benchmark's rule file), its last entry the client; null for none
     * @param token the exempt header, null for none
     */
    public static String allowed(String peer, String forwardedFor, String token) {
        if (token != null && TOKEN != null && MessageDigest.isEqual(TOKEN, token.getBytes(StandardCharsets.UTF_8))) {
            return null;
        }
        String client = forwardedFor == null ? peer : forwardedFor.substring(forwardedFor.lastIndexOf(',') + 1).trim();
        AtomicLong count = COUNTS.get(client);
        if (count == null) {
            count = COUNTS.computeIfAbsent(client, key -> new AtomicLong());
        }
        long remaining = Math.max(0, LIMIT - count.incrementAndGet());
        long reset = (WINDOW_MILLIS - System.currentTimeMillis() % WINDOW_MILLIS + 999) / 1000;
        return "\"api-per-ip\";r=" + remaining + ";t=" + reset;
    }
}
