package dev.ratelimit.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.testing.LogCapture;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the bridge says of an error inside the agent. */
class RateLimitBridgeTest {

    private static List<String> logged(Runnable action) {
        try (LogCapture capture = LogCapture.open()) {
            action.run();
            return capture.messages();
        }
    }

    /**
     * A 429 that could not be written leaves its request rejected: the log said "the call was let
     * through" of it, which a reader of the log took for a limit passed.
     */
    @Test
    void anErrorThatDidNotLetItsCallThroughSaysWhatCameOfTheCall() {
        long before = RateLimitBridge.agentErrors();
        List<String> messages = logged(() -> RateLimitBridge.agentError("writing a test's 429", new IllegalStateException(),
                "the request stays rejected: the application does not run for it"));
        assertEquals(before + 1, RateLimitBridge.agentErrors(), "counted");
        assertEquals(1, messages.size(), messages::toString);
        assertTrue(messages.get(0).contains("writing a test's 429; the request stays rejected"), messages.get(0));
        assertFalse(messages.get(0).contains("let through"), messages.get(0));

        List<String> open = logged(() -> RateLimitBridge.agentError("reading a test's key", new IllegalStateException()));
        assertTrue(open.get(0).contains("reading a test's key; the call was let through"), open.toString());
    }

    /**
     * A key a rule cannot read is warned about once per rule and part, whatever the argument's
     * class: a parameter of an interface type may see a class per call, and once per class such
     * warnings filled the bounded set the internal errors share, which then logged no more
     * (review of the change). Each call is counted all the same.
     */
    @Test
    void aKeyThatCannotBeReadIsWarnedAboutOncePerRuleAndPartWhateverTheClass() {
        long before = RateLimitBridge.agentErrors();
        List<String> messages = logged(() -> {
            for (int i = 0; i < 300; i++) {
                RateLimitBridge.keyUnreadable("bridge-test-rule", "property 'userId'",
                        "no property 'userId' (getter, accessor or field) on app.Impl" + i);
            }
            RateLimitBridge.keyUnreadable("bridge-test-rule", "property 'tenant'",
                    "no property 'tenant' (getter, accessor or field) on app.Impl0");
            RateLimitBridge.agentError("a bridge test's own step", new IllegalStateException());
        });
        assertEquals(before + 302, RateLimitBridge.agentErrors(), "every call counted");
        assertEquals(List.of(
                "rate-limit-agent: rule 'bridge-test-rule' could not read its key: no property 'userId' (getter, accessor"
                        + " or field) on app.Impl0; the call was let through that rule (logged once, counted in agent errors)",
                "rate-limit-agent: rule 'bridge-test-rule' could not read its key: no property 'tenant' (getter, accessor"
                        + " or field) on app.Impl0; the call was let through that rule (logged once, counted in agent errors)",
                "rate-limit-agent: internal error while a bridge test's own step; the call was let through (logged once,"
                        + " counted in agent errors)"), messages);
    }

    /**
     * return-default of an array or a concrete JDK collection: an empty one of the method's own
     * return type, new where the caller may add to it (they were null: the SPEC audit of the
     * thirty-seventh round). A type that cannot be found counts an agent error and gives null.
     */
    @Test
    void aRejectedCallReturningAnArrayOrAJdkCollectionGetsAnEmptyOne() throws Exception {
        Object longs = RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_ARRAY, RateLimitBridgeTest.class, "[J");
        assertTrue(longs instanceof long[] && ((long[]) longs).length == 0, String.valueOf(longs));
        Object nested = RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_ARRAY, RateLimitBridgeTest.class,
                "[[Ljava.lang.String;");
        assertTrue(nested instanceof String[][] && ((String[][]) nested).length == 0, String.valueOf(nested));
        for (String type : List.of("java.util.ArrayList", "java.util.LinkedList", "java.util.HashSet",
                "java.util.LinkedHashSet", "java.util.TreeSet", "java.util.HashMap", "java.util.LinkedHashMap",
                "java.util.TreeMap", "java.util.ArrayDeque", "java.util.Queue", "java.util.Deque", "java.util.SortedSet",
                "java.util.NavigableSet", "java.util.SortedMap", "java.util.NavigableMap",
                "java.util.concurrent.ConcurrentMap", "java.util.concurrent.ConcurrentHashMap",
                "java.util.concurrent.CopyOnWriteArrayList", "java.util.Iterator", "java.util.stream.Stream")) {
            Object empty = RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_EMPTY_OF_TYPE, null, type);
            assertTrue(Class.forName(type).isInstance(empty), type + ": " + empty);
            if (empty instanceof java.util.Collection) {
                assertTrue(((java.util.Collection<?>) empty).isEmpty(), type);
            } else if (empty instanceof java.util.Map) {
                assertTrue(((java.util.Map<?, ?>) empty).isEmpty(), type);
            }
        }
        java.util.List<String> added = (java.util.List<String>) RateLimitBridge.defaultValue(
                RateLimitBridge.RETURNS_EMPTY_OF_TYPE, null, "java.util.ArrayList");
        added.add("the caller's");
        assertEquals(0, ((java.util.List<?>) RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_EMPTY_OF_TYPE, null,
                "java.util.ArrayList")).size(), "a new one each time");
        try (LogCapture log = LogCapture.open()) {
            assertEquals(null, RateLimitBridge.defaultValue(RateLimitBridge.RETURNS_ARRAY, RateLimitBridgeTest.class,
                    "[Lcom.example.Missing;"));
            assertTrue(log.messages().stream().anyMatch(m -> m.contains("making the default value of a rejected call")),
                    log.messages().toString());
        }
    }
}
