package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleConfigTest {

    static RuleConfig only(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "r.yaml", Path.of("."), name -> null).rules().get(0);
    }

    @Test
    void inlineRuleFromAnnotationAttributes() {
        RuleConfig rule = RuleConfig.inline("ReportService#build", KeySpec.parse("arg0"),
                List.of(new LimitSpec(5, Durations.parse("1s"))), OnError.ALLOW);
        assertEquals("ReportService#build", rule.name());
        assertNull(rule.httpMatch());
        assertNull(rule.methodPattern());
        assertEquals(Algorithm.FIXED_WINDOW, rule.algorithm());
        assertEquals(Mode.ENFORCE, rule.mode());
        assertEquals(OnReject.THROW, rule.onReject());
        assertTrue(rule.exempt());
        assertEquals(OnError.ALLOW, rule.onError());
        assertEquals(0, rule.line());
        assertEquals(0, rule.column());
        assertEquals("ReportService#build: named by arg0: 5 per 1s, fixed-window, enforce", rule.describe());
        // store.on-error applies to inline rules as to the file's rules
        assertEquals(OnError.REJECT, RuleConfig.inline("ReportService#build", KeySpec.parse("arg0"),
                List.of(new LimitSpec(5, Durations.parse("1s"))), OnError.REJECT).onError());
        assertThrows(IllegalArgumentException.class,
                () -> RuleConfig.inline("x", KeySpec.global(), List.of(), OnError.ALLOW));
        assertThrows(IllegalArgumentException.class, () -> RuleConfig.inline("", KeySpec.global(),
                List.of(new LimitSpec(1, Duration.ofSeconds(1))), OnError.ALLOW));
    }

    @Test
    void equalityIgnoresPositionButNotBehaviour() throws ConfigException {
        String base = "version: 1\nrules:\n  - name: r\n    limit: 5\n    window: 1s\n";
        RuleConfig rule = only(base);
        RuleConfig moved = only("version: 1\n\n\nrules:\n\n  - name: r\n    window: 1s\n    limit: 5\n");
        assertNotEquals(rule.line(), moved.line());
        assertEquals(rule, moved);
        assertEquals(rule.hashCode(), moved.hashCode());
        assertEquals(RuleConfig.inline("r", KeySpec.global(), List.of(new LimitSpec(5, Duration.ofSeconds(1))),
                OnError.ALLOW), rule);

        for (String change : List.of("    limit: 6\n", "    mode: shadow\n", "    algorithm: token-bucket\n",
                "    exempt: false\n", "    on-error: reject\n", "    key: principal\n",
                "    on-reject: return-default\n", "    match: {method: 'a.B#c'}\n")) {
            String yaml = change.startsWith("    limit:") ? base.replace("    limit: 5\n", change) : base + change;
            assertNotEquals(rule, only(yaml), change);
        }
    }

    @Test
    void limitSpecValidatesAndPrints() {
        assertEquals("300 per 1m", new LimitSpec(300, Duration.ofMinutes(1)).toString());
        assertThrows(IllegalArgumentException.class, () -> new LimitSpec(0, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> new LimitSpec(1, Duration.ZERO));
    }

    @Test
    void enumsRoundTripTheirYamlNames() {
        for (Algorithm value : Algorithm.values()) {
            assertEquals(value, Algorithm.fromYaml(value.yamlName()));
        }
        for (Mode value : Mode.values()) {
            assertEquals(value, Mode.fromYaml(value.yamlName()));
        }
        for (OnReject value : OnReject.values()) {
            assertEquals(value, OnReject.fromYaml(value.yamlName()));
        }
        for (OnError value : OnError.values()) {
            assertEquals(value, OnError.fromYaml(value.yamlName()));
        }
        assertEquals("return-default", OnReject.RETURN_DEFAULT.yamlName());
        assertEquals("fixed-window", Algorithm.FIXED_WINDOW.yamlName());
        assertNull(Algorithm.fromYaml("FIXED_WINDOW"));
        assertNull(Mode.fromYaml("x"));
    }

    @Test
    void errorFormat() {
        assertEquals("a.yaml:3:7: bad", new ConfigError("a.yaml", 3, 7, "bad").format());
        // the contract's FILE:LINE:COLUMN for every error: no position is the file's start
        assertEquals("a.yaml:1:1: bad", new ConfigError("a.yaml", 0, 0, "bad").format());
    }
}
