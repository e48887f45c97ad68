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
