package dev.ratelimit.http;

import dev.ratelimit.config.LimitSpec;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.limit.CoarseClock;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The response fields of draft-ietf-httpapi-ratelimit-headers-11 for one rule, and the RFC 9457
 * problem body of a rejection. Rule names are restricted by the loader to characters that need
 * no escaping in a structured-field string or in JSON, except letters and digits beyond ASCII
 * (a class named {@code Überweisung}): a structured-field string holds ASCII only, so the fields
 * give those as the percent-encoded bytes of their UTF-8 ({@code "%C3%9Cberweisung#send"}), which
 * no name can be confused with ({@code %} is not a name character); the body's
 * {@code violated-policies} names them the same way, so a client can match the two. The body
 * escapes a name anyway, since a rejection the application throws itself may carry any.
 *
 * <p>A rule with one limit is one policy named after the rule; a rule with several limits is one
 * policy per limit, named {@code RULE-WINDOW} (e.g. {@code send-1s}, {@code send-1h}).
 */
final class RateLimitFields {
    static final String PROBLEM_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    private final String policy;
    /** {@code "NAME";r=}: what every {@code RateLimit} item of this rule starts with. */
    private final String itemStart;
    private final long firstWindowMillis;

    RateLimitFields(RuleConfig rule) {
        List<LimitSpec> limits = rule.limits();
        StringBuilder policy = new StringBuilder();
        for (LimitSpec limit : limits) {
            if (policy.length() > 0) {
                policy.append(", ");
            }
            String policyName = fieldName(limits.size() == 1
                    ? rule.name()
                    : rule.name() + '-' + dev.ratelimit.config.Durations.format(limit.window()));
            policy.append('"').append(policyName).append("\";q=").append(fieldInteger(limit.limit()))
                    .append(";w=").append(fieldInteger(seconds(limit.window().toMillis()))); // rounded up: never a faster pace
        }
        this.policy = policy.toString();
        this.itemStart = '"' + fieldName(rule.name()) + "\";r=";
        this.firstWindowMillis = limits.get(0).window().toMillis();
    }

    /** A rule name as a structured-field string's content: as it is, or its non-ASCII characters percent-encoded. */
    static String fieldName(String name) {
        if (name.chars().allMatch(c -> c < 0x80)) {
            return name;
        }
        StringBuilder encoded = new StringBuilder(name.length() * 3);
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            if (b >= 0) {
                encoded.append((char) b);
            } else {
                encoded.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            }
        }
        return encoded.toString();
    }

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** The {@code RateLimit-Policy} items of this rule. */
    String policy() {
        return policy;
    }

    /** The {@code RateLimit} item of an allowed request: calls remaining, seconds until the window resets. */
    String allowed(long remaining) {
        long now = CoarseClock.millis();
        long reset = seconds(firstWindowMillis - now % firstWindowMillis);
        // sized for two longs at once: this runs on every allowed request
        return new StringBuilder(itemStart.length() + 43).append(itemStart).append(fieldInteger(remaining)).append(";t=")
                .append(fieldInteger(reset)).toString();
    }

    /** The {@code RateLimit} item of a rejected request. */
    String rejected(long retryMillis) {
        return itemStart + "0;t=" + fieldInteger(seconds(retryMillis));
    }

    /**
     * The most a structured-field integer may be (RFC 9651, 3.3.1: at most 15 digits): a parser
     * that follows it refuses the whole field over a longer one, which a limit of 10^15 (a rule
     * meant never to refuse), its remaining count, or an application's far-off retry gave (the
     * review of the limit algorithms, thirty-fourth round).
     */
    static final long MAX_FIELD_INTEGER = 999_999_999_999_999L;

    /** {@code value} as a structured-field integer can hold it: at most {@link #MAX_FIELD_INTEGER}. */
    static long fieldInteger(long value) {
        return Math.min(value, MAX_FIELD_INTEGER);
    }

    /**
     * A duration in milliseconds, {@code Long.MAX_VALUE} for one too long to count in them (an
     * application's {@code ChronoUnit.FOREVER}; {@code toMillis} throws), 0 for a negative one.
     */
    static long millis(java.time.Duration duration) {
        try {
            return Math.max(0, duration.toMillis());
        } catch (ArithmeticException tooLong) {
            return duration.isNegative() ? 0 : Long.MAX_VALUE;
        }
    }

    /**
     * Whole seconds, rounded up, at least 1: a client told to retry never retries too early.
     * (Not {@code (millis + 999) / 1000}: an application's own exception may carry any duration,
     * and near {@code Long.MAX_VALUE} that sum overflows to a retry after 1 s.)
     */
    static long seconds(long millis) {
        return Math.max(1, millis / 1000 + (millis % 1000 > 0 ? 1 : 0));
    }

    /** The problem+json body naming the violated policies (never a key or token). */
    static byte[] problem(List<String> violated, long retrySeconds) {
        StringBuilder json = new StringBuilder(256);
        json.append("{\"type\":\"").append(PROBLEM_TYPE).append("\",")
                .append("\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",")
                .append("\"status\":429,")
                .append("\"detail\":\"Too many requests; retry after ").append(retrySeconds).append(" s.\",")
                .append("\"violated-policies\":[");
        for (int i = 0; i < violated.size(); i++) {
            json.append(i == 0 ? "" : ",");
            jsonString(json, fieldName(violated.get(i))); // as RateLimit-Policy names it
        }
        json.append("]}");
        return json.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A JSON string. The rule file's names need no escaping, but a rejection the application
     * threw itself ({@code RateLimitExceededException} is public) may name anything.
     */
    private static void jsonString(StringBuilder json, String text) {
        json.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20 || c == 0x7F || Character.isSurrogate(c) && !wellFormedPair(text, i)) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        json.append('"');
    }

    /** Whether the surrogate at {@code i} is half of a well-formed pair (else UTF-8 cannot encode it). */
    private static boolean wellFormedPair(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
    }
}
