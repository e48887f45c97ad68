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
}
