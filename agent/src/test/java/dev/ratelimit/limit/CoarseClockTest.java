package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The clock's tick: a thousandth of the shortest window, within 1 to 10 ms, and never coarser again. */
class CoarseClockTest {
    @Test
    void theTickIsAThousandthOfTheWindowWithinOneToTenMilliseconds() {
        assertEquals(1_000_000L, CoarseClock.tickFor(1));
        assertEquals(1_000_000L, CoarseClock.tickFor(500));
        assertEquals(1_000_000L, CoarseClock.tickFor(1_000));
        assertEquals(2_500_000L, CoarseClock.tickFor(2_500));
        assertEquals(9_999_000L, CoarseClock.tickFor(9_999));
        assertEquals(10_000_000L, CoarseClock.tickFor(10_000));
        assertEquals(10_000_000L, CoarseClock.tickFor(60_000));
        assertEquals(10_000_000L, CoarseClock.tickFor(86_400_000L * 365 * 1_000_000));
        assertEquals(10_000_000L, CoarseClock.tickFor(Long.MAX_VALUE));
    }

    @Test
    void aShorterWindowMakesTheTickFinerAndALongerOneLeavesIt() throws Exception {
        CoarseClock.resolve(3_000);
        assertTrue(CoarseClock.tickNanos() <= 3_000_000L, () -> "tick " + CoarseClock.tickNanos());
        CoarseClock.resolve(1_000);
        assertEquals(1_000_000L, CoarseClock.tickNanos());
        CoarseClock.resolve(60_000);
        assertEquals(1_000_000L, CoarseClock.tickNanos());
        // at a tick of 1 ms the readings move on within a few ticks, even on a busy machine
        long before = CoarseClock.nanos();
        long deadline = System.nanoTime() + 1_000_000_000L;
        while (CoarseClock.nanos() == before && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(CoarseClock.nanos() > before);
    }
}
