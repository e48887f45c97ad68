package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.testing.LogCapture;
import dev.ratelimit.testing.WindowGuard;
import java.nio.file.Path;
import java.util.List;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

/** What a rule does with a decision: shadow mode, store errors, and the rejection log line. */
class ActiveRuleTest {

    private static RuleConfig rule(String settings) throws ConfigException {
        WindowGuard.awayFromBoundary(3_600_000, 10_000); // its counts are exact within one hour
        return ConfigLoader.parse("version: 1\nrules:\n  - name: r\n    limit: 2\n    window: 1h\n" + settings,
                "r.yaml", Path.of("."), name -> null).rules().get(0);
    }

    /** A store that cannot answer. */
    private static final Limiter UNAVAILABLE = new Limiter() {
        @Override
        public long acquire(String key) {
            throw new StoreUnavailableException("Redis is not answering", null);
        }

        @Override
        public long trackedKeys() {
            return -1;
        }
    };

    @Test
    void aStoreErrorRejectsUnderOnErrorRejectButNeverInShadowMode() throws ConfigException {
        ActiveRule enforcing = new ActiveRule(rule("    on-error: reject\n"), UNAVAILABLE);
        assertFalse(Outcome.isAllowed(enforcing.decide(null, null)));
        assertEquals(1, enforcing.metrics().storeErrors());

        // shadow mode counts, logs and reports, and never rejects: not even when the store fails
        ActiveRule shadow = new ActiveRule(rule("    on-error: reject\n    mode: shadow\n"), UNAVAILABLE);
        for (int i = 0; i < 5; i++) {
            assertTrue(Outcome.isAllowed(shadow.decide(null, null)));
        }
        assertEquals(5, shadow.metrics().storeErrors());
    }

    @Test
    void aShadowRuleLogsWhatItWouldHaveRejectedOncePerWindow() throws ConfigException {
        try (LogCapture capture = LogCapture.open()) {
            ActiveRule shadow = new ActiveRule(rule("    mode: shadow\n"), 100);
            for (int i = 0; i < 6; i++) {
                assertTrue(Outcome.isAllowed(shadow.decide(null, null)));
            }
            assertEquals(4, shadow.metrics().rejected());
            // one line for the window (1h), however many calls it would have rejected; never the key
            List<LogRecord> records = capture.records();
            assertEquals(1, records.size(), records.toString());
            assertEquals(java.util.logging.Level.INFO, records.get(0).getLevel());
            assertTrue(records.get(0).getMessage().contains("rule 'r' would reject (shadow mode)"),
                    records.get(0).getMessage());
        }
    }

    @Test
    void anEnforcingRuleLogsItsRejectionsAtDebugWithItsCountUnderTheseSettings() throws ConfigException {
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger("dev.ratelimit");
        java.util.logging.Level before = logger.getLevel();
        logger.setLevel(java.util.logging.Level.FINE);
        try (LogCapture capture = LogCapture.open()) {
            ActiveRule enforcing = new ActiveRule(rule(""), 100);
            for (int i = 0; i < 5; i++) {
                assertEquals(i < 2, Outcome.isAllowed(enforcing.decide(null, null)));
            }
            assertEquals(3, enforcing.metrics().rejected());
            List<LogRecord> records = capture.records();
            assertEquals(1, records.size(), records.toString());
            assertEquals(java.util.logging.Level.FINE, records.get(0).getLevel());
            // the count is the rule's Rejected metric, which a reload that changes the rule starts again
            assertEquals("rate-limit-agent: rule 'r' rejected calls over [2 per 1h]; 1 rejected since these"
                    + " settings took effect", records.get(0).getMessage());
        } finally {
            logger.setLevel(before);
        }
    }
}
