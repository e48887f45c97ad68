package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Kotlin compiler's suspend functions, as it compiled the fixture's {@code SuspendShop}: a
 * function with a state machine is found with its own continuation class; one that never
 * suspends has none, and is counted as any method.
 */
class SuspendScanTest {
    private static final String CONTINUATION = "Lkotlin/coroutines/Continuation;)Ljava/lang/Object;";

    @Test
    void eachStateMachineIsFoundWithItsContinuation() throws Exception {
        byte[] classFile;
        try (InputStream in = SuspendScanTest.class.getResourceAsStream("/dev/ratelimit/fixture/SuspendShop.class")) {
            classFile = in.readAllBytes();
        }
        assertEquals(Map.of(
                "work(I" + CONTINUATION, "dev.ratelimit.fixture.SuspendShop$work$1",
                "walk(I" + CONTINUATION, "dev.ratelimit.fixture.SuspendShop$walk$1",
                "order(Ljava/lang/String;" + CONTINUATION, "dev.ratelimit.fixture.SuspendShop$order$1"),
                LimitedMethodTransformer.continuationClasses(classFile));
    }

    /**
     * Methods of a suspend function's descriptor whose code does not test their continuation as
     * the state machine does: another value tested against their nest's class, or the
     * continuation against a class of another nest.
     */
    @Test
    void aMethodThatDoesNotTestItsContinuationAsTheStateMachineDoesIsNotOne() throws Exception {
        byte[] classFile;
        try (InputStream in = SuspendScanTest.class.getResourceAsStream("SuspendScanTest$LooksSuspending.class")) {
            classFile = in.readAllBytes();
        }
        assertEquals(Map.of(), LimitedMethodTransformer.continuationClasses(classFile));
    }

    static final class LooksSuspending {
        Object testsAnotherValue(int n, kotlin.coroutines.Continuation<Object> continuation) {
            Object other = this;
            return other instanceof Nested ? continuation : null;
        }

        Object testsAnotherClass(int n, kotlin.coroutines.Continuation<Object> continuation) {
            return continuation instanceof kotlin.coroutines.jvm.internal.ContinuationImpl ? n : null;
        }

        abstract static class Nested implements kotlin.coroutines.Continuation<Object> {
        }
    }
}
