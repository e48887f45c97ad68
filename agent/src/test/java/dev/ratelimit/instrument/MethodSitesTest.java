package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.RateLimitExceededException;
import dev.ratelimit.bootstrap.CallScope;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.RequestKeys;
import dev.ratelimit.store.LimiterFactory;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which calls count when limited calls under one rule are made from inside each other. */
class MethodSitesTest {
    private static final ClassLoader LOADER = MethodSitesTest.class.getClassLoader();

    private static RuleBook book(String rules) throws Exception {
        RuleSet set = ConfigLoader.parse("version: 1\nrules:\n" + rules, "r.yaml", Path.of("."), name -> null);
        return new RuleBook(set, LimiterFactory.of(set.store()), null, () -> { });
    }

    /** The book a reload makes of {@code rules}: the old book's store kept, as when the store settings did not change. */
    private static RuleBook reloaded(RuleBook old, String rules) throws Exception {
        RuleSet set = ConfigLoader.parse("version: 1\nrules:\n" + rules, "r.yaml", Path.of("."), name -> null);
        return new RuleBook(set, LimiterFactory.forReload(old.limiters(), set.store()), old, () -> { });
    }

    private static final String SEND_LIMIT_3 = "  - name: send\n    match:\n      method: app.Svc#send\n"
            + "    limit: 3\n    window: 1h\n";

    /** Registers a method of this descriptor, as the transformer does. */
    private static int register(MethodSites sites, String className, String method, String descriptor,
            String simpleName, boolean passesArguments, boolean callsItself, MethodSite.AnnotationValues annotation) {
        int parameters = net.bytebuddy.jar.asm.Type.getArgumentTypes(descriptor).length;
        return sites.register(LOADER, className, method, descriptor, simpleName, parameters, passesArguments,
                callsItself, annotation);
    }

    private static long allowed(MethodSites sites, int site) {
        return sites.rulesOf(site)[0].metrics().allowed();
    }

    @Test
    void aRuleOfOneMethodThatDoesNotCallItselfTakesNoScope() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3));
        int send = register(sites, "app.Svc", "send", "()V", "Svc", false, false, null);
        assertFalse(sites.rulesOf(send)[0].nests());
        assertNull(sites.enter(send, null));
        assertNull(sites.enter(send, null)); // no scope: each call counts, nested or not
        assertEquals(2, allowed(sites, send));
    }

    @Test
    void anOverloadCalledFromAnOverloadCountsOnce() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3));
        int outer = register(sites, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", false, false, null);
        int inner = register(sites, "app.Svc", "send", "(Ljava/lang/String;I)V", "Svc", false, false, null);
        // the second method bound to the rule makes it nest, for the first method too
        assertTrue(sites.rulesOf(outer)[0].nests());
        for (int i = 0; i < 3; i++) {
            Object scope = sites.enter(outer, null);
            assertInstanceOf(CallScope.class, scope);
            assertNull(sites.enter(inner, null), "inside the outer call: not counted, nothing to close");
            ((CallScope) scope).close();
        }
        assertEquals(3, allowed(sites, outer));
        assertInstanceOf(RateLimitExceededException.class, sites.enter(outer, null));
        assertInstanceOf(RateLimitExceededException.class, sites.enter(inner, null));
    }

    /**
     * An exempt call is part of the exempt call it is made inside, as a plain one is: Exempted
     * counts the outer call once, as Allowed does for a plain caller. It counted every nested call
     * (review of the twenty-fifth round: 10 exempt requests through two methods of one rule read
     * Exempted 20, while 20 plain ones read Allowed 20).
     */
    @Test
    void anExemptCallInsideAnExemptCallIsExemptedOnce() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3));
        int outer = register(sites, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", false, false, null);
        int inner = register(sites, "app.Svc", "send", "(Ljava/lang/String;I)V", "Svc", false, false, null);
        assertTrue(sites.rulesOf(outer)[0].nests());
        RequestContext.set(dev.ratelimit.testing.FixedRequest.from("198.51.100.7").exempt(true));
        try {
            for (int i = 0; i < 5; i++) {
                Object scope = sites.enter(outer, null);
                assertFalse(scope instanceof RateLimitExceededException);
                Object nested = sites.enter(inner, null);
                assertFalse(nested instanceof RateLimitExceededException);
                if (nested instanceof CallScope) {
                    ((CallScope) nested).close();
                }
                if (scope instanceof CallScope) {
                    ((CallScope) scope).close();
                }
            }
        } finally {
            RequestContext.set(null);
        }
        assertEquals(5, sites.rulesOf(outer)[0].metrics().exempted());
        assertEquals(0, allowed(sites, outer));
        // plain calls after them still have the whole limit
        for (int i = 0; i < 3; i++) {
            Object scope = sites.enter(outer, null);
            assertInstanceOf(CallScope.class, scope);
            ((CallScope) scope).close();
        }
        assertInstanceOf(RateLimitExceededException.class, sites.enter(outer, null));
    }

    /** Inside a call for one key, a call for another key is another call: a batch charges each. */
    @Test
    void aCallInsideForAnotherKeyIsCounted() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3.replace("    limit: 3", "    key: arg0\n    limit: 3")));
        int batch = register(sites, "app.Svc", "send", "([Ljava/lang/String;)V", "Svc", true, false, null);
        int one = register(sites, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", true, false, null);
        CallScope outer = (CallScope) sites.enter(batch, new Object[] {"alice"});
        assertNull(sites.enter(one, new Object[] {"alice"}), "alice's own call, inside: counted once");
        CallScope forBob = (CallScope) sites.enter(one, new Object[] {"bob"});
        assertNotNull(forBob, "bob is charged, and his call is now in progress");
        assertNull(sites.enter(one, new Object[] {"bob"}));
        forBob.close();
        outer.close();
        assertEquals(2, sites.rulesOf(one)[0].metrics().allowed());
    }

    @Test
    void aMethodThatCallsItselfCountsOnceAtAnyDepth() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3));
        int send = register(sites, "app.Svc", "send", "(I)I", "Svc", false, true, null);
        Object scope = sites.enter(send, null);
        assertNotNull(scope);
        for (int depth = 0; depth < 10; depth++) {
            assertNull(sites.enter(send, null));
        }
        ((CallScope) scope).close();
        assertEquals(1, allowed(sites, send));
    }

    @Test
    void aRejectedCallLeavesNothingOnTheStack() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3
                + "  - name: narrow\n    match:\n      method: app.Svc#send\n    limit: 1\n    window: 1h\n"));
        int a = register(sites, "app.Svc", "send", "()V", "Svc", false, false, null);
        int b = register(sites, "app.Svc", "send", "(I)V", "Svc", false, false, null);
        ((CallScope) sites.enter(a, null)).close(); // narrow is used up
        // send counts, narrow rejects: the call is skipped, and send must not stay "inside"
        assertInstanceOf(RateLimitExceededException.class, sites.enter(b, null));
        assertInstanceOf(RateLimitExceededException.class, sites.enter(b, null));
        ActiveRule send = sites.rulesOf(a)[0].name().equals("send") ? sites.rulesOf(a)[0] : sites.rulesOf(a)[1];
        assertEquals(3, send.metrics().allowed(), "each rejected call was counted by send, none skipped");
    }

    @Test
    void aScopeNeverClosedIsMendedByTheScopeBelowIt() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3
                + "  - name: other\n    match:\n      method: app.Other#run\n    limit: 100\n    window: 1h\n"));
        int send = register(sites, "app.Svc", "send", "(I)I", "Svc", false, true, null);
        int run = register(sites, "app.Other", "run", "()V", "Other", false, true, null);
        CallScope outer = (CallScope) sites.enter(run, null);
        assertNotNull(sites.enter(send, null)); // its exit never runs
        outer.close();
        assertNotNull(sites.enter(send, null), "send counts again: the lost scope was closed with the outer one");
    }

    @Test
    void scopesAreReusedPerDepthAndThreadsAreApart() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3.replace("limit: 3", "limit: 100")));
        int send = register(sites, "app.Svc", "send", "(I)I", "Svc", false, true, null);
        CallScope first = (CallScope) sites.enter(send, null);
        first.close();
        CallScope second = (CallScope) sites.enter(send, null);
        assertSame(first, second, "no allocation per call");
        Object[] onOtherThread = new Object[1];
        Thread other = new Thread(() -> onOtherThread[0] = sites.enter(send, null));
        other.start();
        other.join();
        assertNotNull(onOtherThread[0], "another thread is not inside this thread's call");
        second.close();
    }

    @Test
    void aReloadThatLeavesARuleOnOneMethodStopsItNesting() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3.replace("app.Svc#send", "app.Svc#*")));
        int send = register(sites, "app.Svc", "send", "()V", "Svc", false, false, null);
        int post = register(sites, "app.Svc", "post", "()V", "Svc", false, false, null);
        assertTrue(sites.rulesOf(send)[0].nests());
        sites.rebind(book(SEND_LIMIT_3));
        assertEquals(0, sites.rulesOf(post).length);
        assertFalse(sites.rulesOf(send)[0].nests(), "bound to one method that does not call itself");
        assertNull(sites.enter(send, null));
    }

    /**
     * A reload that keys a method's rule on an argument its woven code does not pass: until the
     * class is retransformed (its site with the arguments takes the calls), the site keeps the rule
     * it had. Bound to the new rules alone it had none, and the method ran unlimited through the
     * retransformation (review of attach and reload, thirty-fourth round).
     */
    @Test
    void aSiteWithoutTheArgumentsANewRuleKeysOnKeepsItsRuleUntilRewoven() throws Exception {
        RuleBook first = book(SEND_LIMIT_3);
        MethodSites sites = new MethodSites(first);
        int send = register(sites, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", false, false, null);
        ActiveRule before = sites.rulesOf(send)[0];
        RuleBook keyed = reloaded(first, SEND_LIMIT_3.replace("    limit: 3", "    key: arg0\n    limit: 3"));
        sites.rebind(keyed);
        assertEquals(1, sites.rulesOf(send).length, "the site without arguments keeps its rule");
        assertSame(before, sites.rulesOf(send)[0]);
        for (int i = 0; i < 3; i++) {
            assertNull(sites.enter(send, null), "call " + i + " allowed");
        }
        assertInstanceOf(RateLimitExceededException.class, sites.enter(send, null), "the old rule still limits");
        // the class rewoven: its site with the arguments is bound to the new rule
        int rewoven = register(sites, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", true, false, null);
        assertTrue(sites.rulesOf(rewoven)[0].usesArguments(), "bound to the rule keyed on arg0");
        // a reload that leaves the rule unkeyed again binds the old site as usual
        sites.rebind(reloaded(keyed, SEND_LIMIT_3.replace("limit: 3", "limit: 4")));
        assertEquals(4, sites.rulesOf(send)[0].config().limits().get(0).limit());
        // a reload that replaced the store: the old rules would count on a store about to close,
        // so the site takes the new rules (none, until it is rewoven), not the old ones
        MethodSites other = new MethodSites(book(SEND_LIMIT_3));
        int elsewhere = register(other, "app.Svc", "send", "(Ljava/lang/String;)V", "Svc", false, false, null);
        other.rebind(book(SEND_LIMIT_3.replace("    limit: 3", "    key: arg0\n    limit: 3")));
        assertEquals(0, other.rulesOf(elsewhere).length);
    }

    /**
     * A limited method called while serving a request whose token header was forged: the method's
     * rule counts it in ForgedTokens, as an HTTP rule does. Only HTTP rules once counted it.
     */
    @Test
    void aCallServingARequestWithAForgedTokenIsCountedAsForged() throws Exception {
        MethodSites sites = new MethodSites(book(SEND_LIMIT_3.replace("limit: 3", "limit: 100")));
        int send = register(sites, "app.Svc", "send", "()V", "Svc", false, false, null);
        RequestKeys forged = dev.ratelimit.testing.FixedRequest.from("192.0.2.1").withForgedToken();
        RequestContext.set(forged);
        try {
            sites.enter(send, null);
            sites.enter(send, null);
        } finally {
            RequestContext.set(null);
        }
        sites.enter(send, null);
        assertEquals(2, sites.rulesOf(send)[0].metrics().forgedTokens());
        assertEquals(3, sites.rulesOf(send)[0].metrics().allowed());
    }

    @Test
    void theSelfCallScanFindsDirectRecursionOnly() throws Exception {
        byte[] classFile;
        try (var in = LOADER.getResourceAsStream(Recursion.class.getName().replace('.', '/') + ".class")) {
            classFile = in.readAllBytes();
        }
        Set<String> found = LimitedMethodTransformer.callingThemselves(classFile);
        assertEquals(Set.of("factorial(I)J", "ping(Ljava/lang/String;)V"), found);
    }

    @SuppressWarnings("unused")
    static class Recursion {
        long factorial(int n) {
            return n <= 1 ? 1 : n * factorial(n - 1);
        }

        void ping(String s) {
            if (s.isEmpty()) {
                ping("x");
            }
        }

        void ping(String s, int times) {
            ping(s); // another descriptor: not a call to itself
        }

        int length(String s) {
            return s.length();
        }
    }

    /**
     * A method that calls itself through a lambda or a method reference of its own
     * ({@code kids.forEach(k -> walk(k))}, {@code kids.forEach(this::walk)}) calls itself as the
     * README means it: the call is in its code as written. javac puts a lambda's body in a
     * synthetic method of the class, so the scan once found no such call, the rule did not nest,
     * and a tree walk of four nodes took four calls of a limit of 3, and was refused.
     */
    @Test
    void theSelfCallScanFindsRecursionThroughItsOwnLambdasAndMethodReferences() throws Exception {
        byte[] classFile;
        try (var in = LOADER.getResourceAsStream(LambdaRecursion.class.getName().replace('.', '/') + ".class")) {
            classFile = in.readAllBytes();
        }
        Set<String> found = LimitedMethodTransformer.callingThemselves(classFile);
        String node = "(L" + LambdaRecursion.class.getName().replace('.', '/') + ";)V";
        assertTrue(found.contains("walk" + node), found::toString);
        assertTrue(found.contains("walkRef" + node), found::toString);
        assertTrue(found.contains("nested" + node), found::toString);
        assertFalse(found.contains("other" + node), found::toString);
        assertFalse(found.contains("elsewhere" + node), found::toString);
    }

    @SuppressWarnings("unused")
    static class LambdaRecursion {
        final java.util.List<LambdaRecursion> kids = new java.util.ArrayList<>();

        void walk(LambdaRecursion t) {
            t.kids.forEach(k -> walk(k));
        }

        void walkRef(LambdaRecursion t) {
            t.kids.forEach(this::walkRef);
        }

        void nested(LambdaRecursion t) {
            t.kids.forEach(k -> k.kids.forEach(g -> nested(g)));
        }

        void other(LambdaRecursion t) {
            t.kids.forEach(k -> walk(k)); // calls walk, not itself
        }

        void elsewhere(LambdaRecursion t) {
            t.kids.forEach(this::walkRef); // a reference to another method
        }
    }

    private static final String KEYED_THEN_EVERYONE = "  - name: keyed\n    match:\n      method: app.Svc#send\n"
            + "    key: arg0.name\n    limit: 100\n    window: 1h\n"
            + "  - name: everyone\n    match:\n      method: app.Svc#send\n    limit: 1\n    window: 1h\n";

    /**
     * Rules on one method are checked in file order and the first refusal stops the check, as the
     * README says: a per-user rule before a global cap keeps a client over its own limit from
     * using up the cap; after it, each refused call takes one from the cap (review: the order
     * decides, so the README tells which to put first).
     */
    @Test
    void theFirstRuleToRefuseACallStopsTheCheckInFileOrder() throws Exception {
        String perUser = "  - name: per-user\n    match:\n      method: app.Svc#send\n    key: arg0\n    limit: 2\n    window: 1h\n";
        String cap = "  - name: cap\n    match:\n      method: app.Svc#send\n    limit: 10\n    window: 1h\n";
        for (boolean userFirst : new boolean[] {true, false}) {
            MethodSites sites = new MethodSites(book(userFirst ? perUser + cap : cap + perUser));
            int send = register(sites, "app.Svc", "send", "(Ljava/lang/Object;)V", "Svc", true, false, null);
            int abuserAllowed = 0;
            for (int i = 0; i < 20; i++) {
                if (sites.enter(send, new Object[] {"abuser"}) == null) {
                    abuserAllowed++;
                }
            }
            assertEquals(2, abuserAllowed);
            Object bob = sites.enter(send, new Object[] {"bob"});
            if (userFirst) {
                assertNull(bob, "the abuser's refused calls stopped at its own rule: the cap holds 2 of 10");
            } else {
                assertInstanceOf(RateLimitExceededException.class, bob, "each refused call took one from the cap");
                assertEquals("cap", ((RateLimitExceededException) bob).rule());
            }
        }
    }

    /**
     * A reload makes its rule book, then binds the sites to it. A class loaded in between makes
     * its inline rule under the book still in force; binding then made it a second time, from
     * nothing, and an inline limit of 3 an hour let 6 through (review). The steps of
     * {@code AgentInstaller.apply}, with the class load between them.
     */
    @Test
    void anInlineRuleMadeByAClassLoadedDuringAReloadKeepsItsCount() throws Exception {
        RuleSet before = ConfigLoader.parse("version: 1\nrules: []\n", "r.yaml", Path.of("."), name -> null);
        RuleSet after = ConfigLoader.parse("version: 1\nrules:\n  - {name: x, key: global, limit: 9, window: 1h}\n",
                "r.yaml", Path.of("."), name -> null);
        LimiterFactory limiters = LimiterFactory.of(before.store());
        RuleBook old = new RuleBook(before, limiters, null, () -> { });
        MethodSites sites = new MethodSites(old);
        RuleBook book = new RuleBook(after, LimiterFactory.forReload(limiters, after.store()), old, () -> { });
        int export = register(sites, "app.Report", "export", "()V", "Report", false, false,
                new MethodSite.AnnotationValues("", 3, "1h", "global"));
        int allowed = 0;
        for (int i = 0; i < 3; i++) {
            allowed += sites.enter(export, null) == null ? 1 : 0;
        }
        sites.rebind(book);
        for (int i = 0; i < 3; i++) {
            allowed += sites.enter(export, null) == null ? 1 : 0;
        }
        assertEquals(3, allowed, "calls allowed under an inline limit of 3 an hour");
    }

    /**
     * A rule that nests (here: a method that calls itself) and 100 calls at once from one client,
     * half of them serving a request with the valid token: the 50 exempt calls pass uncounted and
     * exactly 5 of the plain ones pass, every round. The nesting path decides apart from
     * ActiveRule.decide, and must skip exempt requests itself (review of the tests: with that
     * check removed every unit test still passed, and internal callers were counted and limited).
     */
    @Test
    void exemptCallsRacingPlainOnesOnANestingRuleAreNeverCounted() throws Exception {
        dev.ratelimit.testing.WindowGuard.awayFromBoundary(3_600_000, 30_000);
        MethodSites sites = new MethodSites(book("  - name: send\n    match:\n      method: app.Svc#send\n"
                + "    key: client-ip\n    limit: 5\n    window: 1h\n"));
        int send = register(sites, "app.Svc", "send", "(I)I", "Svc", false, true, null);
        assertTrue(sites.rulesOf(send)[0].nests());
        int rounds = 200;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(100);
        java.util.List<String> wrong = new java.util.ArrayList<>();
        try {
            for (int round = 0; round < rounds; round++) {
                String address = "198.51.100." + (round % 250) + "/" + round;
                java.util.concurrent.atomic.AtomicInteger plainPassed = new java.util.concurrent.atomic.AtomicInteger();
                int passed = dev.ratelimit.testing.Race.sum(pool, 100, thread -> {
                    boolean exempt = thread % 2 == 0;
                    RequestContext.set(dev.ratelimit.testing.FixedRequest.from(address).exempt(exempt));
                    try {
                        Object outcome = sites.enter(send, null);
                        if (outcome instanceof RateLimitExceededException) {
                            return 0;
                        }
                        if (outcome instanceof CallScope) {
                            ((CallScope) outcome).close();
                        }
                        if (!exempt) {
                            plainPassed.incrementAndGet();
                        }
                        return 1;
                    } finally {
                        RequestContext.set(null);
                    }
                });
                if (passed != 55 || plainPassed.get() != 5) {
                    wrong.add("round " + round + ": " + passed + " passed, " + plainPassed.get() + " of them plain");
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(java.util.List.of(), wrong);
        assertEquals(50L * rounds, sites.rulesOf(send)[0].metrics().exempted());
        assertEquals(5L * rounds, sites.rulesOf(send)[0].metrics().allowed());
    }

    /** An argument whose key property cannot be read. */
    public static final class Nameless {
        public String getName() {
            throw new IllegalStateException("no name");
        }
    }

    /**
     * A rule whose key cannot be read lets the call through that rule alone (counted as an agent
     * error); the method's other rules still decide. The error once ended the whole decision, so
     * the global limit beside it let every such call through.
     */
    @Test
    void aRuleWhoseKeyFailsLetsTheCallThroughThatRuleOnly() throws Exception {
        MethodSites sites = new MethodSites(book(KEYED_THEN_EVERYONE));
        int send = register(sites, "app.Svc", "send", "(Ljava/lang/Object;)V", "Svc", true, false, null);
        assertFalse(sites.rulesOf(send)[0].nests());
        long errors = RateLimitBridge.agentErrors();
        Object[] arguments = {new Nameless()};
        assertNull(sites.enter(send, arguments));
        assertInstanceOf(RateLimitExceededException.class, sites.enter(send, arguments), "the global rule limits");
        assertEquals(errors + 2, RateLimitBridge.agentErrors());
    }

    /** The same where the rules can nest (bound to two overloads): the scope holds only what was counted. */
    @Test
    void aNestingRuleWhoseKeyFailsLetsTheCallThroughThatRuleOnly() throws Exception {
        MethodSites sites = new MethodSites(book(KEYED_THEN_EVERYONE));
        int send = register(sites, "app.Svc", "send", "(Ljava/lang/Object;)V", "Svc", true, false, null);
        register(sites, "app.Svc", "send", "(Ljava/lang/Object;I)V", "Svc", true, false, null);
        assertTrue(sites.rulesOf(send)[0].nests());
        Object[] arguments = {new Nameless()};
        Object scope = sites.enter(send, arguments);
        assertInstanceOf(CallScope.class, scope, "the global rule counted the call");
        ((CallScope) scope).close();
        assertInstanceOf(RateLimitExceededException.class, sites.enter(send, arguments), "the global rule limits");
    }

    /** An argument whose text cannot be made: its toString recurses until the stack overflows. */
    public static final class Cyclic {
        @Override
        public String toString() {
            return "Cyclic(" + this + ")";
        }
    }

    private static final String TEXT_KEYED_THEN_EVERYONE = KEYED_THEN_EVERYONE.replace("key: arg0.name", "key: arg0");

    /**
     * An Error from the key (a toString that overflows the stack, as a two-way entity's generated
     * toString does) is a failure of that rule's key too: it lets the call through that rule
     * alone, and the method's global rule still limits. It once escaped the per-rule catch, and
     * the bridge let the whole call through, so the global limit of 1 let every call through.
     */
    @Test
    void aRuleWhoseKeyThrowsAnErrorLetsTheCallThroughThatRuleOnly() throws Exception {
        MethodSites sites = new MethodSites(book(TEXT_KEYED_THEN_EVERYONE));
        int send = register(sites, "app.Svc", "send", "(Ljava/lang/Object;)V", "Svc", true, false, null);
        assertFalse(sites.rulesOf(send)[0].nests());
        long errors = RateLimitBridge.agentErrors();
        Object[] arguments = {new Cyclic()};
        assertNull(sites.enter(send, arguments));
        assertInstanceOf(RateLimitExceededException.class, sites.enter(send, arguments), "the global rule limits");
        assertEquals(errors + 2, RateLimitBridge.agentErrors());
    }

    /** The same where the rules can nest. */
    @Test
    void aNestingRuleWhoseKeyThrowsAnErrorLetsTheCallThroughThatRuleOnly() throws Exception {
        MethodSites sites = new MethodSites(book(TEXT_KEYED_THEN_EVERYONE));
        int send = register(sites, "app.Svc", "send", "(Ljava/lang/Object;)V", "Svc", true, false, null);
        register(sites, "app.Svc", "send", "(Ljava/lang/Object;I)V", "Svc", true, false, null);
        assertTrue(sites.rulesOf(send)[0].nests());
        Object[] arguments = {new Cyclic()};
        Object scope = sites.enter(send, arguments);
        assertInstanceOf(CallScope.class, scope, "the global rule counted the call");
        ((CallScope) scope).close();
        assertInstanceOf(RateLimitExceededException.class, sites.enter(send, arguments), "the global rule limits");
    }

    /** An argument with a readable key property. */
    public static final class Named {
        private final String name;

        Named(String name) {
            this.name = name;
        }

        public String getName() {
            return name;
        }
    }

    /**
     * A site whose only rule can nest takes a short path of its own (the general one was too big
     * for the JIT to inline): it must decide as the general path does.
     */
    @Test
    void aSiteWhoseOneRuleCanNestDecidesAsTheGeneralPathDoes() throws Exception {
        MethodSites sites = new MethodSites(book("  - name: keyed\n    match:\n      method: app.Svc#send\n"
                + "    key: arg0.name\n    limit: 2\n    window: 1h\n"));
        int send = register(sites, "app.Svc", "send", "(Ljava/lang/Object;)V", "Svc", true, false, null);
        int overload = register(sites, "app.Svc", "send", "(Ljava/lang/Object;I)V", "Svc", true, false, null);
        assertEquals(1, sites.rulesOf(send).length);
        assertTrue(sites.rulesOf(send)[0].nests());
        // a key that cannot be read: the call goes through, counted as the agent's error, no scope
        long errors = RateLimitBridge.agentErrors();
        assertNull(sites.enter(send, new Object[] {new Nameless()}));
        assertEquals(errors + 1, RateLimitBridge.agentErrors());
        Object[] ann = {new Named("ann")};
        Object[] bob = {new Named("bob")};
        CallScope first = (CallScope) sites.enter(send, ann);
        assertNull(sites.enter(overload, ann), "inside the call that counted ann");
        assertInstanceOf(CallScope.class, sites.enter(overload, bob), "another key is another call");
        first.close();
        ((CallScope) sites.enter(overload, ann)).close();
        assertInstanceOf(RateLimitExceededException.class, sites.enter(send, ann), "ann's third call");
        // the rejected call left nothing on the stack: bob's next call is counted, and the one
        // inside it is not
        CallScope bobsSecond = (CallScope) sites.enter(send, bob);
        assertNull(sites.enter(overload, bob));
        bobsSecond.close();
        assertEquals(4, allowed(sites, send));
    }

    /**
     * Two class loaders can share an identity hash: a web application redeployed a few thousand
     * times makes as many loaders of the same classes. A method of the second loader took the
     * first's site, and with it the first's annotation: a redeployment that renamed the method's
     * rule (@RateLimited("a") to "b") kept the old rule.
     */
    @Test
    void aMethodOfALoaderWithAnotherLoadersIdentityHashHasASiteOfItsOwn() throws Exception {
        ClassLoader[] pair = loadersOfOneIdentityHash();
        MethodSites sites = new MethodSites(book("  - {name: a, limit: 1, window: 1h}\n  - {name: b, limit: 2, window: 1h}\n"));
        int first = sites.register(pair[0], "app.Svc", "send", "()V", "Svc", 0, false, false,
                new MethodSite.AnnotationValues("a", 10, "1s", "global"));
        int second = sites.register(pair[1], "app.Svc", "send", "()V", "Svc", 0, false, false,
                new MethodSite.AnnotationValues("b", 10, "1s", "global"));
        assertNotEquals(first, second);
        assertEquals("a", sites.rulesOf(first)[0].name());
        assertEquals("b", sites.rulesOf(second)[0].name());
        // transformed again (a reload's retransformation), each keeps its own
        assertEquals(first, sites.register(pair[0], "app.Svc", "send", "()V", "Svc", 0, false, false,
                new MethodSite.AnnotationValues("a", 10, "1s", "global")));
        assertEquals(second, sites.register(pair[1], "app.Svc", "send", "()V", "Svc", 0, false, false,
                new MethodSite.AnnotationValues("b", 10, "1s", "global")));
        // and the boot loader's method is a third
        int boot = sites.register(null, "app.Svc", "send", "()V", "Svc", 0, false, false, null);
        assertNotEquals(first, boot);
        assertNotEquals(second, boot);
        assertEquals(boot, sites.register(null, "app.Svc", "send", "()V", "Svc", 0, false, false, null));
    }

    /** Two class loaders whose identity hashes are equal: about 60,000 loaders made, typically. */
    private static ClassLoader[] loadersOfOneIdentityHash() {
        java.util.Map<Integer, ClassLoader> byHash = new java.util.HashMap<>();
        for (int i = 0; i < 2_000_000; i++) {
            ClassLoader loader = new ClassLoader(null) { };
            ClassLoader earlier = byHash.putIfAbsent(System.identityHashCode(loader), loader);
            if (earlier != null) {
                return new ClassLoader[] {earlier, loader};
            }
        }
        throw new AssertionError("no two of 2,000,000 class loaders shared an identity hash");
    }
}
