package dev.ratelimit.testing;

import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

/**
 * A client far over a rule's short limit: a burst of 10 calls at the start of each of five short
 * windows, under a rule of 2 calls a short window and 5 an hour. A refused call uses up none of
 * the rule's limits, so the hour lets 5 through in all; counted in the hour, the refused calls of
 * the first burst used it up, and only 2 got through.
 */
public final class RefusedBursts {
    /** The rule's limits, as the rule file's lines. */
    public static final String LIMITS = "    limits:\n      - {limit: 2, window: 250ms}\n      - {limit: 5, window: 1h}";
    /** What the hour lets through. */
    public static final int HOURLY_LIMIT = 5;
    private static final long SHORT_WINDOW_MILLIS = 250;

    private RefusedBursts() {
    }

    /**
     * Sends the bursts and counts the calls allowed.
     *
     * @param acquire one call's outcome
     * @param allowed whether an outcome allows the call
     */
    public static int allowedInAll(LongSupplier acquire, LongPredicate allowed) throws InterruptedException {
        WindowGuard.awayFromBoundary(3_600_000, 10_000);
        int passed = 0;
        for (int burst = 0; burst < 5; burst++) {
            long now = System.currentTimeMillis();
            // a few ms past the boundary, so that the agent's clock (a tick behind at most) is in the new window
            Thread.sleep(SHORT_WINDOW_MILLIS - now % SHORT_WINDOW_MILLIS + 5);
            for (int call = 0; call < 10; call++) {
                passed += allowed.test(acquire.getAsLong()) ? 1 : 0;
            }
        }
        return passed;
    }
}
