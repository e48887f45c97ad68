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
}
