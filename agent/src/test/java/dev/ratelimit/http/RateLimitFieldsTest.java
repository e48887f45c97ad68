package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.config.ConfigLoader;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The RateLimit-Policy items a rule advertises. */
class RateLimitFieldsTest {

    private static String policy(String window) throws Exception {
        return fields("a", window).policy();
    }

    private static RateLimitFields fields(String name, String window) throws Exception {
        return new RateLimitFields(ConfigLoader.parse("version: 1\nrules:\n  - name: \"" + name + "\"\n"
                + "    match: {http: {path: /api/**}}\n    limit: 3\n    window: " + window + "\n",
                "rules.yaml", Path.of("."), n -> null).rules().get(0));
    }

    /**
     * A structured-field string holds printable ASCII only: a rule name with letters beyond it
     * (an annotated method of a class named Überweisung) is given percent-encoded as UTF-8.
     */
    @org.junit.jupiter.api.Test
    void aNameBeyondAsciiIsPercentEncodedInTheFields() throws Exception {
        RateLimitFields fields = fields("Überweisung#send", "1s");
        assertEquals("\"%C3%9Cberweisung#send\";q=3;w=1", fields.policy());
        assertEquals("\"%C3%9Cberweisung#send\";r=0;t=2", fields.rejected(1500));
        assertEquals("\"_a$b.c:d#e/f-g\";q=3;w=1", fields("_a$b.c:d#e/f-g", "1s").policy(), "ASCII stays as it is");
        String body = new String(RateLimitFields.problem(java.util.List.of("Überweisung#send"), 2),
                java.nio.charset.StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertTrue(body.contains("\"violated-policies\":[\"%C3%9Cberweisung#send\"]"),
                "the body names the policy as the fields do: " + body);
        assertEquals("\"%E6%9C%8D%E5%8A%A1%F0%9D%92%9C\";q=3;w=1", fields("服务\uD835\uDC9C", "1s").policy());
    }

    /**
     * A structured-field integer has at most 15 digits (RFC 9651, 3.3.1), and a parser that keeps
     * to it refuses the whole field over a longer one: a limit of 10^15 (a rule meant never to
     * refuse) said {@code q=1000000000000000}, its remaining count and an application's far-off
     * retry more still. Each is given as the largest such integer instead (the review of the
     * limit algorithms, thirty-fourth round).
     */
    @org.junit.jupiter.api.Test
    void numbersBeyondFifteenDigitsAreGivenAsTheLargestFieldInteger() throws Exception {
        for (String limit : new String[] {"1000000000000000", "9223372036854775807"}) {
            RateLimitFields fields = new RateLimitFields(ConfigLoader.parse("version: 1\nrules:\n  - name: a\n"
                    + "    match: {http: {path: /api/**}}\n    limit: " + limit + "\n    window: 1s\n",
                    "rules.yaml", Path.of("."), n -> null).rules().get(0));
            assertEquals("\"a\";q=999999999999999;w=1", fields.policy(), limit);
            assertEquals("\"a\";r=999999999999999;t=1", fields.allowed(Long.parseLong(limit) - 1), limit);
        }
        RateLimitFields fields = fields("a", "1s");
        assertEquals("\"a\";r=0;t=999999999999999", fields.rejected(Long.MAX_VALUE));
        assertEquals("\"a\";r=0;t=999999999999999", fields.rejected(999_999_999_999_999_000L));
        assertEquals("\"a\";r=0;t=999999999999998", fields.rejected(999_999_999_999_998_000L));
        assertEquals("\"a\";r=999999999999999;t=1", fields.allowed(999_999_999_999_999L));
        assertEquals("\"a\";q=999999999999999;w=1", new RateLimitFields(ConfigLoader.parse("version: 1\nrules:\n"
                + "  - name: a\n    match: {http: {path: /api/**}}\n    limit: 999999999999999\n    window: 1s\n",
                "rules.yaml", Path.of("."), n -> null).rules().get(0)).policy(), "15 digits are given as they are");
        assertEquals(Long.MAX_VALUE, RateLimitFields.millis(java.time.temporal.ChronoUnit.FOREVER.getDuration()));
        assertEquals(0, RateLimitFields.millis(java.time.Duration.ofSeconds(Long.MIN_VALUE)));
    }

    /**
     * The draft gives {@code w} in whole seconds. A window that is not a whole number of seconds
     * is advertised rounded up, never down: "3 per 1.5 s" as "3 per 2 s" is a pace the rule
     * allows, where "3 per 1 s" (once advertised) was not, and a client keeping to it was refused.
     */
    @ParameterizedTest
    @CsvSource({"1500ms, 2", "999ms, 1", "500ms, 1", "1ms, 1", "1s, 1", "1001ms, 2", "1m, 60", "61500ms, 62", "1d, 86400"})
    void aWindowIsAdvertisedInWholeSecondsRoundedUp(String window, long seconds) throws Exception {
        assertEquals("\"a\";q=3;w=" + seconds, policy(window));
    }
}
