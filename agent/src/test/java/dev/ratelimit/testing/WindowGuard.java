package dev.ratelimit.testing;

/**
 * Fixed windows are aligned to the epoch, so a test that expects "exactly 5 of 100" would see 10
 * if its calls straddled a window boundary: correct behaviour, wrong test. Tests call this first
 * to start well inside a window.
 */
public final class WindowGuard {
    private WindowGuard() {
    }

    /** Sleeps past the next boundary of {@code windowMillis} windows if fewer than {@code marginMillis} remain. */
    public static void awayFromBoundary(long windowMillis, long marginMillis) {
        long left = windowMillis - System.currentTimeMillis() % windowMillis;
        if (left < marginMillis) {
            try {
                Thread.sleep(left + 50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
