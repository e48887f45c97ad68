package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.store.LimiterFactory;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the agent MBean says of the rule file as the watcher reports on it. */
class RuleReloaderTest {
    private static final String NONE = "none of the rule file's rules are in force until a valid version is loaded"
            + " (on-config-error=disable; inline limits of annotations apply)";

    /** The outcome before the file went missing is said again, marked, once the file is back unchanged. */
    @Test
    void aFileBackUnchangedRestoresTheOutcomeItHadBefore() {
        RuleReloader reloader = new RuleReloader(null, Path.of("rules.yaml"));
        reloader.rejected(List.of());
        String refused = reloader.getLastReloadOutcome();
        reloader.missing();
        assertEquals("the rule file is missing or unreadable; the previous rules stay in force",
                reloader.getLastReloadOutcome());
        reloader.back();
        assertEquals(refused + "; the rule file was missing and is back, unchanged", reloader.getLastReloadOutcome());
        // a file that keeps going and coming back is said to be back once, not once per return
        for (int i = 0; i < 3; i++) {
            reloader.missing();
            reloader.back();
        }
        assertEquals(refused + "; the rule file was missing and is back, unchanged", reloader.getLastReloadOutcome());
    }

    /** A file refused under on-config-error=disable is not reported as an empty one. */
    @Test
    void aStartWithoutTheFilesRulesSaysWhy() {
        assertEquals("started without the rules: the rule file is invalid (2 errors) (on-config-error=disable)",
                RuleReloader.startOutcome(RuleSet.refused("rules.yaml", "the rule file is invalid (2 errors)")));
        assertEquals("started with 0 rules", RuleReloader.startOutcome(RuleSet.empty("rules.yaml")));
    }

    /**
     * Started without the file's rules (on-config-error=disable): a missing file or a refused edit
     * leaves none of the file's rules in force (an annotation's inline limits apply), and the MBean
     * and the log say so. They said "the previous rules stay in force", and an operator took the
     * application for limited by the file (the review of operations, thirty-sixth round).
     */
    @Test
    void startedWithoutTheRulesNoPreviousRulesAreSaidToStayInForce() {
        RuleReloader reloader = new RuleReloader(null, Path.of("rules.yaml"));
        reloader.startedWith(RuleSet.refused("rules.yaml", "the rule file does not exist"));
        try (dev.ratelimit.testing.LogCapture capture = dev.ratelimit.testing.LogCapture.open()) {
            reloader.missing();
            assertEquals("the rule file is missing or unreadable; " + NONE, reloader.getLastReloadOutcome());
            assertEquals(List.of("rate-limit-agent: rules.yaml is missing or unreadable; " + NONE), capture.messages());
            reloader.rejected(List.of(new dev.ratelimit.config.ConfigError("rules.yaml", 1, 1, "the rule file is empty")));
            assertEquals("invalid (1 error); " + NONE, reloader.getLastReloadOutcome());
            assertEquals("rate-limit-agent: after a change to the rule file or a token file it names, the rules are"
                    + " invalid; " + NONE + ":\n"
                    + "rules.yaml:1:1: the rule file is empty", capture.messages().get(1));
        }
        // started with the file's rules: they stay in force
        RuleReloader started = new RuleReloader(null, Path.of("rules.yaml"));
        started.startedWith(RuleSet.empty("rules.yaml"));
        started.missing();
        assertEquals("the rule file is missing or unreadable; the previous rules stay in force", started.getLastReloadOutcome());
    }

    /** The audit saw "1 rules" in the start line; the outcome and the rule book say "1 rule". */
    @Test
    void oneRuleIsOneRule() throws Exception {
        RuleSet one = ConfigLoader.parse("version: 1\nrules:\n  - name: a\n    key: global\n    limit: 1\n    window: 1s\n",
                "rules.yaml", Path.of("."), name -> null);
        assertEquals("started with 1 rule", RuleReloader.startOutcome(one));
        assertEquals("1 rule: a (named)", new RuleBook(one, LimiterFactory.of(one.store()), null, () -> { }).describe());
    }

    /**
     * A refused reload's log line does not say the rule file was edited: a token file it names may
     * be what changed, and each error names its own file (review of the thirty-third round).
     */
    @Test
    void aRefusedReloadSaysTheRuleFileOrATokenFileChanged() {
        RuleReloader reloader = new RuleReloader(null, Path.of("rules.yaml"));
        try (dev.ratelimit.testing.LogCapture capture = dev.ratelimit.testing.LogCapture.open()) {
            reloader.rejected(List.of(new dev.ratelimit.config.ConfigError("tokens/internal", 1, 1,
                    "token file tokens/internal is empty; it must hold the internal token")));
            assertEquals(List.of("rate-limit-agent: after a change to the rule file or a token file it names, the rules"
                    + " are invalid; the previous rules stay in force:\ntokens/internal:1:1: token file tokens/internal"
                    + " is empty; it must hold the internal token"), capture.messages());
        }
    }
}
