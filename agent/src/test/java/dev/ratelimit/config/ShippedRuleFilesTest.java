package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The rule files the project ships must load: the demo's run command depends on them. */
class ShippedRuleFilesTest {

    @Test
    void theDemoRuleFileLoads() throws Exception {
        RuleSet rules = ConfigLoader.load(Path.of("../config/rules.yaml"),
                Map.of("RATELIMIT_INTERNAL_TOKEN", "demo-internal-token-change-me")::get);
        assertEquals(4, rules.rules().size());
        assertTrue(rules.exempt().isEnabled());
        assertEquals(2, rules.client().trustedProxies().size());
        assertTrue(rules.rule("send-message").isPresent());
    }
}
