package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.config.ConfigLoader;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The RateLimit-Policy items a rule advertises. */
class RateLimitFieldsTest {

    private static String policy(String window) throws Exception {
        return new RateLimitFields(ConfigLoader.parse("version: 1\nrules:\n  - name: a\n"
                + "    match: {http: {path: /api/**}}\n    limit: 3\n    window: " + window + "\n",
                "rules.yaml", Path.of("."), name -> null).rules().get(0)).policy();
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
