package dev.ratelimit.testing;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waits for the agent's clock (a thread that ticks it, which a busy machine may keep behind) to
 * reach a point, within a deadline: a clock that stopped is a failure of its own, not a test that
 * hangs until the build's time runs out.
 */
public final class ClockWait {
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(5);

    private ClockWait() {
    }

    /** Polls {@code reached} every millisecond until it holds; fails after 5 s. */
    public static void until(BooleanSupplier reached, String what) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!reached.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                // a stall of the whole JVM may have outlasted the deadline: give the clock's
                // thread one more chance to tick before calling it stopped
                Thread.sleep(50);
                if (reached.getAsBoolean()) {
                    return;
                }
                throw new AssertionError("the agent's clock did not reach " + what + " within 5 s");
            }
            Thread.sleep(1);
        }
    }
}
