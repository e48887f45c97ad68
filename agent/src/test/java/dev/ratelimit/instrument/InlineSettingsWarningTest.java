package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.store.LimiterFactory;
import dev.ratelimit.testing.LogCapture;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The warning for an overload whose @RateLimited settings differ from the inline rule it shares. */
class InlineSettingsWarningTest {

    private static List<String> warningsFor(String firstWindow, String firstKey, String secondWindow, String secondKey)
            throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite first = new MethodSite(1, "app.Svc", "send", "Svc", 2, true, false,
                new MethodSite.AnnotationValues("", 5, firstWindow, firstKey));
        MethodSite second = new MethodSite(2, "app.Svc", "send", "Svc", 3, true, false,
                new MethodSite.AnnotationValues("", 5, secondWindow, secondKey));
        try (LogCapture capture = LogCapture.open()) {
            book.rulesFor(first);
            book.rulesFor(second);
            return capture.messages(java.util.logging.Level.WARNING);
        }
    }

    @Test
    void theSameSettingsWrittenDifferentlyAreNotWarnedAbout() throws Exception {
        assertEquals(List.of(), warningsFor("60s", "arg0,arg1", "1m", "arg0, arg1"));
        assertEquals(List.of(), warningsFor("1h", "principal", "3600s", " principal "));
    }

    /**
     * A warning about a method is said once, not again by each reload that still finds it so
     * (the soak: an annotation naming a missing rule, 77 lines for 76 reloads).
     */
    @Test
    void aWarningIsNotRepeatedByEachReload() throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(rules.store());
        MethodSite site = new MethodSite(1, "app.Svc", "export", "Svc", 0, false, false,
                new MethodSite.AnnotationValues("report-export", 5, "1m", "global"));
        try (LogCapture capture = LogCapture.open()) {
            RuleBook book = new RuleBook(rules, store, null, () -> { });
            book.rulesFor(site);
            for (int reload = 0; reload < 3; reload++) {
                book = new RuleBook(rules, store, book, () -> { });
                book.rulesFor(site);
            }
            List<String> warnings = capture.messages(java.util.logging.Level.WARNING);
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains("report-export"), warnings.toString());
        }
    }

    /** Header names are case-insensitive: header:X-Tenant and header:x-tenant read one header. */
    @Test
    void oneHeaderNamedInAnotherCaseIsTheSameKey() throws Exception {
        assertEquals(List.of(), warningsFor("1m", "header:X-Tenant", "1m", "header:x-tenant"));
    }

    /**
     * Overloads share class and method name, so the warning's "app.Svc#send" does not say which
     * overload differs, and its once-key (rule and class#method) lets only the first of two
     * differing overloads be warned about.
     */
    @Test
    void eachDifferingOverloadIsWarnedAboutAndNamedApart() throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite first = new MethodSite(1, "app.Svc", "send", "Svc", 1, true, false,
                new MethodSite.AnnotationValues("", 5, "1m", "arg0"));
        MethodSite second = new MethodSite(2, "app.Svc", "send", "Svc", 2, true, false,
                new MethodSite.AnnotationValues("", 5, "1m", "arg1"));
        MethodSite third = new MethodSite(3, "app.Svc", "send", "Svc", 3, true, false,
                new MethodSite.AnnotationValues("", 7, "1m", "arg0"));
        List<String> warnings;
        try (LogCapture capture = LogCapture.open()) {
            book.rulesFor(first);
            book.rulesFor(second);
            book.rulesFor(third);
            warnings = capture.messages(java.util.logging.Level.WARNING);
        }
        assertEquals(2, warnings.size(), warnings::toString);
    }

    /**
     * Two overloads of one parameter each: the warning names the overload by its parameter types.
     * By its count of parameters, it called both "the overload taking 1 parameter" (method-rule
     * review, thirty-second round).
     */
    @Test
    void overloadsOfOneParameterEachAreNamedByTheirTypes() throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite first = new MethodSite(1, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", 1, true, false,
                new MethodSite.AnnotationValues("", 5, "1m", "arg0"), null);
        MethodSite second = new MethodSite(2, "app.Svc", "send", "([J)V", "Svc", 1, true, false,
                new MethodSite.AnnotationValues("", 7, "1m", "arg0"), null);
        MethodSite third = new MethodSite(3, "app.Svc", "send", "([JLapp/Svc$Order;)V", "Svc", 2, true, false,
                new MethodSite.AnnotationValues("", 9, "1m", "arg0"), null);
        List<String> warnings;
        try (LogCapture capture = LogCapture.open()) {
            book.rulesFor(first);
            book.rulesFor(second);
            book.rulesFor(third.withArguments());
            warnings = capture.messages(java.util.logging.Level.WARNING);
        }
        assertEquals(2, warnings.size(), warnings::toString);
        assertTrue(warnings.get(0).startsWith("rate-limit-agent: @RateLimited on app.Svc#send (the overload"
                + " send(long[]): key arg0, 7 per 1m) declares other settings"), warnings.get(0));
        assertTrue(warnings.get(1).startsWith("rate-limit-agent: @RateLimited on app.Svc#send (the overload"
                + " send(long[], app.Svc$Order): key arg0, 9 per 1m) declares other settings"), warnings.get(1));
    }

    /** A rule removed, brought back, removed again: the annotated method is unlimited again, and it is said again. */
    @Test
    void aMissingRuleIsSaidAgainOnceItWasBackAndIsGoneAgain() throws Exception {
        RuleSet without = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleSet with = ConfigLoader.parse("version: 1\nrules:\n  - name: report-export\n    limit: 5\n    window: 1m\n",
                "r.yaml", Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(without.store());
        MethodSite site = new MethodSite(1, "app.Svc", "export", "Svc", 0, false, false,
                new MethodSite.AnnotationValues("report-export", 5, "1m", "global"));
        try (LogCapture capture = LogCapture.open()) {
            RuleBook book = new RuleBook(without, store, null, () -> { });
            book.rulesFor(site);
            book = new RuleBook(with, store, book, () -> { });
            assertEquals(1, book.rulesFor(site).length);
            book = new RuleBook(without, store, book, () -> { });
            assertEquals(0, book.rulesFor(site).length);
            List<String> warnings = capture.messages(java.util.logging.Level.WARNING);
            assertEquals(2, warnings.size(), warnings.toString());
        }
    }

    /** An arity warning named arg1; the rule, edited to key on arg4, is warned about again, naming arg4. */
    @Test
    void anArityWarningForAnotherArgumentIsSaid() throws Exception {
        String rule = "version: 1\nrules:\n  - name: send\n    match:\n      method: app.Svc#send\n    key: ARG\n    limit: 5\n    window: 1m\n";
        RuleSet arg1 = ConfigLoader.parse(rule.replace("ARG", "arg1"), "r.yaml", Path.of("."), name -> null);
        RuleSet arg4 = ConfigLoader.parse(rule.replace("ARG", "arg4"), "r.yaml", Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(arg1.store());
        MethodSite site = new MethodSite(1, "app.Svc", "send", "Svc", 1, true, false, null);
        try (LogCapture capture = LogCapture.open()) {
            RuleBook book = new RuleBook(arg1, store, null, () -> { });
            book.rulesFor(site);
            book = new RuleBook(arg4, store, book, () -> { });
            book.rulesFor(site);
            List<String> warnings = capture.messages(java.util.logging.Level.WARNING);
            assertEquals(2, warnings.size(), warnings.toString());
        }
    }
}
