package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
