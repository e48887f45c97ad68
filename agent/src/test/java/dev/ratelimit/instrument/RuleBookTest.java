package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.OnError;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.store.LimiterFactory;
import dev.ratelimit.testing.LogCapture;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleBookTest {

    /** What the inline rule of an annotated method does when its store fails, under this store section. */
    private static OnError inlineRuleOnError(String store) throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\n" + store + "rules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite site = new MethodSite(1, "app.ReportService", "export", "ReportService", 0, false, false,
                new MethodSite.AnnotationValues("", 5, "1s", "global"));
        return book.rulesFor(site)[0].config().onError();
    }

    /**
     * {@code @RateLimited("named")} under a rule file refused with on-config-error=disable: the
     * warning says the file's rules are not in force, not that the file names no such rule, which
     * it may well do (the SPEC audit of the thirty-seventh round). A file in force that lacks the
     * rule is said to lack it.
     */
    @Test
    void aNamedAnnotationUnderARefusedFileIsSaidToBeOffNotMissing() throws Exception {
        RuleSet refused = RuleSet.refused("r1.yaml", "the agent options are invalid");
        RuleSet loaded = ConfigLoader.parse("version: 1\nrules: []\n", "r2.yaml", Path.of("."), name -> null);
        List<String> warnings;
        try (LogCapture capture = LogCapture.open()) {
            for (RuleSet rules : List.of(refused, loaded)) {
                RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
                MethodSite site = new MethodSite(1, "app.Svc", "send", "Svc", 0, false, false,
                        new MethodSite.AnnotationValues("named", -1, "", ""));
                assertEquals(0, book.rulesFor(site).length);
            }
            warnings = capture.messages(java.util.logging.Level.WARNING);
        }
        assertEquals(2, warnings.size(), warnings::toString);
        assertTrue(warnings.get(0).contains("names a rule, but none of the rules of r1.yaml is in force (the agent options are"
                + " invalid; on-config-error=disable); the method is not limited"), warnings.get(0));
        assertTrue(warnings.get(1).contains("names no rule in r2.yaml; the method is not limited"), warnings.get(1));
    }

    /**
     * A rule keyed on arg1 bound to a method of one parameter cannot count its calls. It once
     * failed every call as an agent error, or, for a method without parameters, was dropped without
     * a word; now it is not bound, and the agent says so once.
     */
    @Test
    void aRuleKeyedOnAnArgumentTheMethodLacksIsSaidOnceAndBindsNothing() throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules:\n  - name: by-user\n    match:\n"
                + "      method: app.Svc#send\n    key: arg1\n    limit: 5\n    window: 1s\n",
                "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        List<String> warnings;
        try (LogCapture capture = LogCapture.open()) {
            // the transformer's probe (site -1), asking whether to pass the arguments: no warning,
            // and the rule does not make the advice pass them
            MethodSite probe = new MethodSite(-1, "app.Svc", "send", "Svc", 1, false, false, null);
            assertEquals(false, book.needsArguments(probe));
            assertEquals(List.of(), capture.messages(java.util.logging.Level.WARNING));
            MethodSite one = new MethodSite(1, "app.Svc", "send", "Svc", 1, true, false, null);
            assertEquals(0, book.rulesFor(one).length);
            assertEquals(0, book.rulesFor(one).length);
            MethodSite none = new MethodSite(2, "app.Svc", "send", "Svc", 0, false, false, null);
            assertEquals(0, book.rulesFor(none).length);
            MethodSite two = new MethodSite(3, "app.Svc", "send", "Svc", 2, true, false, null);
            assertEquals(1, book.rulesFor(two).length);
            warnings = capture.messages(java.util.logging.Level.WARNING);
        }
        assertEquals(List.of(
                "rate-limit-agent: rule 'by-user' keys on arg1, but app.Svc#send takes 1 parameter: the rule does"
                        + " not limit its calls",
                "rate-limit-agent: rule 'by-user' keys on arg1, but app.Svc#send takes 0 parameters: the rule does"
                        + " not limit its calls"), warnings);
    }

    /**
     * Overloads share their default name, and so their inline rule: the first one bound makes
     * it, and its limit and key count the other's calls too. An overload whose annotation says
     * something else ({@code key = "arg1"}, another limit) was counted under the first one's
     * settings without a word; the agent now warns once, naming the rule and the method. An
     * overload that says the same, or the transformer's probe, is not warned about.
     */
    @Test
    void anOverloadWhoseInlineSettingsDifferFromItsSharedRuleIsWarnedAbout() throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite first = new MethodSite(1, "app.Svc", "send", "Svc", 1, true, false,
                new MethodSite.AnnotationValues("", 2, "1h", "arg0"));
        MethodSite same = new MethodSite(2, "app.Svc", "send", "Svc", 3, true, false,
                new MethodSite.AnnotationValues("", 2, "1h", "arg0"));
        MethodSite probe = new MethodSite(-1, "app.Svc", "send", "Svc", 2, false, false,
                new MethodSite.AnnotationValues("", 5, "1h", "arg1"));
        MethodSite other = new MethodSite(3, "app.Svc", "send", "Svc", 2, true, false,
                new MethodSite.AnnotationValues("", 5, "1h", "arg1"));
        List<String> warnings;
        try (LogCapture capture = LogCapture.open()) {
            ActiveRule rule = book.rulesFor(first)[0];
            assertSame(rule, book.rulesFor(same)[0]);
            book.rulesFor(probe);
            assertEquals(List.of(), capture.messages(java.util.logging.Level.WARNING));
            assertSame(rule, book.rulesFor(other)[0]); // still shared, as the README says
            book.rulesFor(other);
            warnings = capture.messages(java.util.logging.Level.WARNING);
        }
        assertEquals(1, warnings.size(), warnings::toString);
        assertTrue(warnings.get(0).contains("'Svc#send'") && warnings.get(0).contains("app.Svc#send"),
                warnings::toString);
    }

    /**
     * An annotated method's default name is {@code SimpleClassName#method} whatever the class is
     * called, and its inline rule is made under that name. A class named {@code _Legacy} or
     * {@code Überweisung}, legal Java, once had its method left unlimited with a warning: the
     * name did not pass the rule-name check (review of the twenty-first round).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"_Legacy", "Überweisung", "$Proxy12", "Ωμέγα", "服务",
            "A" + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})
    void everyJavaClassNameGivesAnInlineRule(String simpleName) throws Exception {
        RuleSet rules = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(rules, LimiterFactory.of(rules.store()), null, () -> { });
        MethodSite site = new MethodSite(1, "app." + simpleName, "send", simpleName, 0, false, false,
                new MethodSite.AnnotationValues("", 2, "1h", "global"));
        assertEquals(1, book.rulesFor(site).length, simpleName);
        assertEquals(simpleName + "#send", book.rulesFor(site)[0].name());
    }

    /** An inline rule does what store.on-error says, as every rule of the file does by default. */
    @Test
    void inlineRulesFollowTheStoresOnError() throws Exception {
        assertEquals(OnError.REJECT, inlineRuleOnError("store:\n  on-error: reject\n"));
        assertEquals(OnError.ALLOW, inlineRuleOnError("store:\n  on-error: allow\n"));
        assertEquals(OnError.ALLOW, inlineRuleOnError(""));
    }

    /**
     * A reload that edits only store.on-error keeps the store (LimiterFactory.forReload): the
     * inline rules made under the old default are made again under the new one. They were carried
     * over with the store, and an annotated method kept allowing its calls on a store failure
     * after on-error: reject.
     */
    @Test
    void aReloadOfTheStoresOnErrorReachesTheInlineRules() throws Exception {
        RuleSet before = ConfigLoader.parse("version: 1\nstore:\n  on-error: allow\nrules: []\n", "r.yaml", Path.of("."),
                name -> null);
        RuleSet after = ConfigLoader.parse("version: 1\nstore:\n  on-error: reject\nrules: []\n", "r.yaml", Path.of("."),
                name -> null);
        LimiterFactory store = LimiterFactory.of(before.store());
        MethodSite site = new MethodSite(1, "app.ReportService", "export", "ReportService", 0, false, false,
                new MethodSite.AnnotationValues("", 5, "1s", "global"));
        RuleBook first = new RuleBook(before, store, null, () -> { });
        assertEquals(OnError.ALLOW, first.rulesFor(site)[0].config().onError());
        LimiterFactory kept = LimiterFactory.forReload(store, after.store());
        assertSame(store, kept, "the store is kept through an edit of on-error");
        RuleBook reloaded = new RuleBook(after, kept, first, () -> { });
        assertEquals(OnError.REJECT, reloaded.rulesFor(site)[0].config().onError());
        // and an inline rule the edit does not concern is carried over, counters and all
        RuleBook again = new RuleBook(after, kept, reloaded, () -> { });
        assertSame(reloaded.rulesFor(site)[0], again.rulesFor(site)[0]);
    }

    /**
     * An override of an annotated method's inline rule (a file rule of its default name), added
     * and then removed, gives the method back its inline rule where it stood: at its limit of 2,
     * it stays at it, through an unrelated edit in between too. It came back with fresh counters,
     * and every key of the method had a fresh budget (method review, fortieth round).
     */
    @Test
    void anOverrideAddedAndRemovedGivesTheInlineRuleBackWithItsCounters() throws Exception {
        String override = "  - name: ReportService#archive\n    key: global\n    limit: 5\n    window: 1h\n";
        String other = "  - name: other\n    key: global\n    limit: 1\n    window: 1h\n";
        RuleSet plain = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleSet overridden = ConfigLoader.parse("version: 1\nrules:\n" + override, "r.yaml", Path.of("."), name -> null);
        RuleSet overriddenAndOther = ConfigLoader.parse("version: 1\nrules:\n" + override + other, "r.yaml",
                Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(plain.store());
        MethodSite annotated = new MethodSite(2, "app.ReportService", "archive", "ReportService", 0, false, false,
                new MethodSite.AnnotationValues("", 2, "1h", "global"));
        RuleBook first = new RuleBook(plain, store, null, () -> { });
        ActiveRule inline = first.rulesFor(annotated)[0];
        assertTrue(Outcome.isAllowed(inline.decide(new Object[0], null)));
        assertTrue(Outcome.isAllowed(inline.decide(new Object[0], null)));
        assertFalse(Outcome.isAllowed(inline.decide(new Object[0], null)));

        RuleBook withOverride = new RuleBook(overridden, store, first, () -> { });
        ActiveRule file = withOverride.rulesFor(annotated)[0];
        assertEquals(5, file.config().limits().get(0).limit(), "the file's rule of the method's name decides");
        assertTrue(Outcome.isAllowed(file.decide(new Object[0], null)));
        RuleBook edited = new RuleBook(overriddenAndOther, store, withOverride, () -> { });
        assertSame(file, edited.rulesFor(annotated)[0], "an unrelated edit keeps the override");

        RuleBook removed = new RuleBook(plain, store, edited, () -> { });
        ActiveRule back = removed.rulesFor(annotated)[0];
        assertSame(inline, back, "the inline rule, counters and all");
        assertFalse(Outcome.isAllowed(back.decide(new Object[0], null)), "still at its limit of 2");
        assertEquals(List.of("ReportService#archive"), removed.names());
    }

    /**
     * An edit of the store's on-error alone keeps the counters of the rules that take it: a
     * file's rule and an inline one, each at its limit of 1 an hour, stay at it. They were made
     * again, and each let one more call through.
     */
    @Test
    void aReloadOfTheStoresOnErrorKeepsTheRulesCounters() throws Exception {
        String rules = "rules:\n  - name: once\n    match:\n      method: app.ReportService#export\n"
                + "    key: global\n    limit: 1\n    window: 1h\n";
        RuleSet before = ConfigLoader.parse("version: 1\nstore:\n  on-error: allow\n" + rules, "r.yaml", Path.of("."),
                name -> null);
        RuleSet after = ConfigLoader.parse("version: 1\nstore:\n  on-error: reject\n" + rules, "r.yaml", Path.of("."),
                name -> null);
        LimiterFactory store = LimiterFactory.of(before.store());
        RuleBook first = new RuleBook(before, store, null, () -> { });
        MethodSite annotated = new MethodSite(2, "app.ReportService", "archive", "ReportService", 0, false, false,
                new MethodSite.AnnotationValues("", 1, "1h", "global"));
        ActiveRule file = first.rule("once");
        ActiveRule inline = first.rulesFor(annotated)[0];
        assertTrue(Outcome.isAllowed(file.decide(new Object[0], null)));
        assertTrue(Outcome.isAllowed(inline.decide(new Object[0], null)));

        RuleBook reloaded = new RuleBook(after, LimiterFactory.forReload(store, after.store()), first, () -> { });
        ActiveRule fileAfter = reloaded.rule("once");
        ActiveRule inlineAfter = reloaded.rulesFor(annotated)[0];
        assertEquals(OnError.REJECT, fileAfter.config().onError());
        assertEquals(OnError.REJECT, inlineAfter.config().onError());
        assertFalse(Outcome.isAllowed(fileAfter.decide(new Object[0], null)), "the file's rule started afresh");
        assertFalse(Outcome.isAllowed(inlineAfter.decide(new Object[0], null)), "the inline rule started afresh");
        assertEquals(1, fileAfter.metrics().rejected(), "its metrics count on");
        assertEquals(file.id(), fileAfter.id(), "the same rule to a call under way (no second count when it nests)");
    }

    /**
     * A slow in-place write ({@code slow-command > rules.yaml}) can be caught half done: a valid
     * file holding the first rules, the rest not yet written. The next version brings them back
     * unchanged, and they count on where they were (the reload review: rule c, at its limit of 3,
     * came back with fresh counters and let 3 more through). Only for one reload, and only a
     * rule whose settings did not change.
     */
    @Test
    void aRuleDroppedByOneReloadAndBroughtBackUnchangedByTheNextCountsOn() throws Exception {
        String a = "  - {name: a, limit: 5, window: 1h}\n";
        String c = "  - {name: c, limit: 1, window: 1h}\n";
        RuleSet whole = ConfigLoader.parse("version: 1\nrules:\n" + a + c, "r.yaml", Path.of("."), name -> null);
        RuleSet half = ConfigLoader.parse("version: 1\nrules:\n" + a, "r.yaml", Path.of("."), name -> null);
        RuleSet changed = ConfigLoader.parse("version: 1\nrules:\n" + a + c.replace("limit: 1", "limit: 2"), "r.yaml",
                Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(whole.store());
        RuleBook first = new RuleBook(whole, store, null, () -> { });
        assertTrue(Outcome.isAllowed(first.rule("c").decide(new Object[0], null)));
        RuleBook caughtHalfWritten = new RuleBook(half, store, first, () -> { });
        assertNull(caughtHalfWritten.rule("c"));
        RuleBook finished = new RuleBook(whole, store, caughtHalfWritten, () -> { });
        assertSame(first.rule("c"), finished.rule("c"));
        assertFalse(Outcome.isAllowed(finished.rule("c").decide(new Object[0], null)), "rule c started afresh");
        // brought back with other settings, it starts afresh, as any changed rule does
        RuleBook again = new RuleBook(changed, store, new RuleBook(half, store, finished, () -> { }), () -> { });
        assertTrue(Outcome.isAllowed(again.rule("c").decide(new Object[0], null)));
        // and only the reload right after the one that dropped it looks for it
        RuleBook later = new RuleBook(whole, store, new RuleBook(half, store, new RuleBook(half, store, finished,
                () -> { }), () -> { }), () -> { });
        assertNotSame(finished.rule("c"), later.rule("c"));
    }

    /**
     * A slow in-place write caught half done can also cut a rule short: {@code limit: 1} of
     * {@code limit: 10}, a valid file that changes it. The next version brings it back as it was,
     * and it counts on: it started afresh, and a client at its limit of 10 got 10 more (the hot
     * reload review: 9 more 200s after a 300 ms pause in the write). Only for one reload.
     */
    @Test
    void aRuleChangedByOneReloadAndRestoredByTheNextCountsOn() throws Exception {
        String a = "  - {name: a, limit: 5, window: 1h}\n";
        RuleSet whole = ConfigLoader.parse("version: 1\nrules:\n" + a + "  - {name: dom, limit: 3, window: 1d}\n",
                "r.yaml", Path.of("."), name -> null);
        RuleSet cut = ConfigLoader.parse("version: 1\nrules:\n" + a + "  - {name: dom, limit: 1}\n".replace("}", ", window: 1d}"),
                "r.yaml", Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(whole.store());
        RuleBook first = new RuleBook(whole, store, null, () -> { });
        for (int i = 0; i < 3; i++) {
            assertTrue(Outcome.isAllowed(first.rule("dom").decide(new Object[0], null)));
        }
        assertFalse(Outcome.isAllowed(first.rule("dom").decide(new Object[0], null)));
        RuleBook caughtCut = new RuleBook(cut, store, first, () -> { });
        assertNotSame(first.rule("dom"), caughtCut.rule("dom"), "a changed rule starts afresh");
        RuleBook finished = new RuleBook(whole, store, caughtCut, () -> { });
        assertSame(first.rule("dom"), finished.rule("dom"));
        assertFalse(Outcome.isAllowed(finished.rule("dom").decide(new Object[0], null)), "dom started afresh");
        assertSame(first.rule("a"), finished.rule("a"));
        // the cut version itself, restored by the version after the whole one, is not looked for
        RuleBook cutAgain = new RuleBook(cut, store, new RuleBook(whole, store, finished, () -> { }), () -> { });
        assertNotSame(caughtCut.rule("dom"), cutAgain.rule("dom"));
        // and only the reload right after the one that changed it looks for it
        RuleBook later = new RuleBook(whole, store, new RuleBook(cut, store, new RuleBook(cut, store, finished,
                () -> { }), () -> { }), () -> { });
        assertNotSame(finished.rule("dom"), later.rule("dom"));
    }

    /**
     * A reload that adds a method rule naming a class that does not exist (a misspelling) was
     * never warned about: the warning for method rules that match no method looked only once,
     * after start-up (the hot reload review). A reload now looks, a minute later, at the method
     * rules it added or pointed at other methods, and only at those.
     */
    @Test
    void aReloadLooksForIdleMethodRulesAmongThoseItAddedOrRepointed() throws Exception {
        String kept = "  - {name: kept, limit: 5, window: 1h, match: {method: app.Svc#send}}\n";
        String idleBefore = "  - {name: idle-before, limit: 5, window: 1h, match: {method: app.Gone#x}}\n";
        RuleSet first = ConfigLoader.parse("version: 1\nrules:\n" + kept + idleBefore, "r.yaml", Path.of("."), name -> null);
        RuleSet next = ConfigLoader.parse("version: 1\nrules:\n" + kept + idleBefore
                + "  - {name: typo, limit: 5, window: 1h, match: {method: app.Sv#send}}\n"
                + "  - {name: fine, limit: 5, window: 1h, match: {method: app.Svc#send}}\n", "r.yaml", Path.of("."), name -> null);
        LimiterFactory store = LimiterFactory.of(first.store());
        RuleBook before = new RuleBook(first, store, null, () -> { });
        RuleBook after = new RuleBook(next, store, before, () -> { });
        java.util.Map<String, String> fresh = after.methodRulesNewTo(before);
        assertEquals(java.util.Set.of("typo", "fine"), fresh.keySet());
        List<MethodSite> sites = List.of(new MethodSite(1, "app.Svc", "send", "Svc", 1, true, false, null));
        assertEquals(List.of("typo (app.Sv#send)"), after.idleMethodRules(sites, fresh));
        assertEquals(List.of("idle-before (app.Gone#x)", "typo (app.Sv#send)"), after.idleMethodRules(sites));
        // re-pointed by the next reload: looked at again; unchanged: not
        RuleSet repointed = ConfigLoader.parse("version: 1\nrules:\n" + kept.replace("app.Svc#send", "app.Svc#sendd")
                + idleBefore, "r.yaml", Path.of("."), name -> null);
        RuleBook third = new RuleBook(repointed, store, after, () -> { });
        assertEquals(java.util.Set.of("kept"), third.methodRulesNewTo(after).keySet());
        assertEquals(List.of("kept (app.Svc#sendd)"), third.idleMethodRules(sites, third.methodRulesNewTo(after)));
        // a rule the book in force by then names otherwise is left out
        assertEquals(List.of(), third.idleMethodRules(sites, fresh));
        // start-up looks at every method rule of its book, and only at those: a rule a reload
        // added within the first minute was reported twice, by start-up's look and its own
        java.util.Map<String, String> atStart = before.methodRulesNewTo(null);
        assertEquals(java.util.Set.of("kept", "idle-before"), atStart.keySet());
        assertEquals(List.of("idle-before (app.Gone#x)"), after.idleMethodRules(sites, atStart));
        // a canonical nested name is reported with what to write
        RuleSet nested = ConfigLoader.parse("version: 1\nrules:\n"
                + "  - {name: nested, limit: 5, window: 1h, match: {method: app.Svc.Inner#send}}\n", "r.yaml",
                Path.of("."), name -> null);
        assertEquals(List.of("nested (app.Svc.Inner#send; if app.Svc is a class, write its nested class as"
                + " app.Svc$Inner#send)"), new RuleBook(nested, store, null, () -> { }).idleMethodRules(sites));
    }

    private static RuleSet twoRules(int otherLimit, String onError) throws Exception {
        return ConfigLoader.parse("version: 1\nstore:\n  on-error: " + onError + "\nrules:\n"
                + "  - {name: r, key: arg0, limit: 5, window: 1h, match: {method: app.Svc#send}}\n"
                + "  - {name: other, key: arg0, limit: " + otherLimit + ", window: 1h, match: {method: app.Other#x}}\n",
                "r.yaml", Path.of("."), name -> null);
    }

    /**
     * Reloads that change another rule, and the store's on-error every other time, run without
     * pause while 100 threads at once call a rule the edits leave alone and an inline rule: each
     * lets exactly 5 through per key, every round (the concurrency audit of the twenty-third round
     * found reloads proven only between calls). The books are chained as AgentInstaller.apply
     * chains them.
     */
    @Test
    void unchangedRulesCountExactlyWhileReloadsRun() throws Exception {
        dev.ratelimit.testing.WindowGuard.awayFromBoundary(3_600_000, 60_000);
        RuleSet first = twoRules(1, "allow");
        java.util.concurrent.atomic.AtomicReference<RuleBook> inForce = new java.util.concurrent.atomic.AtomicReference<>(
                new RuleBook(first, LimiterFactory.of(first.store()), null, () -> { }));
        MethodSite fileSite = new MethodSite(1, "app.Svc", "send", "Svc", 1, true, false, null);
        MethodSite inlineSite = new MethodSite(2, "app.Report", "export", "Report", 1, true, false,
                new MethodSite.AnnotationValues("", 5, "1h", "arg0"));
        inForce.get().rulesFor(inlineSite);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(100);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger reloads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        Thread reloader = new Thread(() -> {
            try {
                for (int i = 1; !stop.get(); i++) {
                    RuleSet next = twoRules(1 + i % 7, i % 2 == 0 ? "allow" : "reject");
                    RuleBook old = inForce.get();
                    inForce.set(new RuleBook(next, LimiterFactory.forReload(old.limiters(), next.store()), old, () -> { }));
                    reloads.incrementAndGet();
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        reloader.start();
        List<String> wrong = new java.util.ArrayList<>();
        try {
            for (int round = 0; round < 200; round++) {
                Object[] args = {"k" + round};
                int file = dev.ratelimit.testing.Race.passed(pool, 100,
                        () -> Outcome.isAllowed(inForce.get().rulesFor(fileSite)[0].decide(args, null)));
                int inline = dev.ratelimit.testing.Race.passed(pool, 100,
                        () -> Outcome.isAllowed(inForce.get().rulesFor(inlineSite)[0].decide(args, null)));
                if (file != 5 || inline != 5) {
                    wrong.add("round " + round + ": the file's rule " + file + ", the inline rule " + inline);
                }
            }
        } finally {
            stop.set(true);
            reloader.join();
            pool.shutdownNow();
        }
        assertEquals(null, failed.get());
        assertTrue(reloads.get() > 100, "reloads while the rounds ran: " + reloads.get());
        assertEquals(List.of(), wrong);
    }
}
