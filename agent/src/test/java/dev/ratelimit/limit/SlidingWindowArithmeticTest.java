package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The sliding window's carried share, {@code previous * left / window} rounded down, is exact
 * where the product passes a long (a limit of 10^9 over a year), and so is the retry time worked
 * out from it. The Redis script computes the same share (RedisSlidingWindowScriptTest), so the
 * calls it keeps are the calls the decision allows.
 */
class SlidingWindowArithmeticTest {
    private static final long YEAR = 366L * 86_400_000L;

    @Test
    void theCarriedShareIsExactPastALong() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++) {
            // windows (a year at most); up to where doubles estimate the share (2^52); beyond
            long c = 1 + random.nextLong(i % 3 == 0 ? YEAR : i % 3 == 1 ? 1L << 52 : Long.MAX_VALUE / 4);
            long b = random.nextLong(c + 1);
            long a = random.nextLong(Long.MAX_VALUE);
            assertEquals(exact(a, b, c), SlidingWindowLimit.mulDiv(a, b, c), a + " * " + b + " / " + c);
        }
    }

    /** Where a double rounds the quotient up to the next whole number: {@code a * b} one short of a multiple of {@code c}. */
    @Test
    void theCarriedShareIsNotRoundedUpToTheNextWholeCall() {
        SplittableRandom random = new SplittableRandom(11);
        int checked = 0;
        while (checked < 10_000) {
            long c = 86_400_000L + random.nextLong(YEAR - 86_400_000L);
            long a = 1_000_000L + random.nextLong(1_000_000_000_000L);
            BigInteger bc = BigInteger.valueOf(c);
            if (!BigInteger.valueOf(a).gcd(bc).equals(BigInteger.ONE)) {
                continue;
            }
            long b = BigInteger.valueOf(a).modInverse(bc).multiply(BigInteger.valueOf(c - 1)).mod(bc).longValueExact();
            assertEquals(exact(a, b, c), SlidingWindowLimit.mulDiv(a, b, c), a + " * " + b + " / " + c);
            checked++;
        }
        // one of them, worked in doubles: 1 more than the exact share
        long a = 999_999_999_989L;
        long c = YEAR;
        long b = BigInteger.valueOf(a).modInverse(BigInteger.valueOf(c)).multiply(BigInteger.valueOf(c - 1))
                .mod(BigInteger.valueOf(c)).longValueExact();
        assertEquals(exact(a, b, c) + 1, (long) ((double) a * (double) b / (double) c));
        assertEquals(exact(a, b, c), SlidingWindowLimit.mulDiv(a, b, c));
    }

    /** The retry time's bound: the largest {@code s} with {@code c * s < a * b}, where its answer fits a long. */
    @Test
    void theRetryBoundIsExactPastALong() {
        SplittableRandom random = new SplittableRandom(13);
        int checked = 0;
        while (checked < 200_000) {
            long a = 1 + random.nextLong(Long.MAX_VALUE / 2);
            long b = 1 + random.nextLong(YEAR);
            long c = 1 + random.nextLong(Long.MAX_VALUE);
            BigInteger expected = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).subtract(BigInteger.ONE)
                    .divide(BigInteger.valueOf(c));
            if (expected.bitLength() > 62) {
                continue;
            }
            assertEquals(expected.longValueExact(), SlidingWindowLimit.largestBelow(a, b, c), a + ", " + b + ", " + c);
            checked++;
        }
        // a product that is a multiple of c: the bound is one below the quotient
        assertEquals(YEAR - 1, SlidingWindowLimit.largestBelow(Long.MAX_VALUE / 2, YEAR, Long.MAX_VALUE / 2));
    }

    private static long exact(long a, long b, long c) {
        return BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(c)).longValueExact();
    }
}
