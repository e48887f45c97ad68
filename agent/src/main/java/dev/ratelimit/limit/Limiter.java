package dev.ratelimit.limit;

/**
 * The limits of one rule over its keys, in some store. Every implementation is increment-first:
 * one atomic update per limit whose own result decides.
 */
public interface Limiter {

    /**
     * Counts one call for {@code key} and decides it.
     *
     * @param key the key; ignored by rules keyed {@code global}
     * @return an {@link Outcome}
     * @throws StoreUnavailableException when the store cannot answer in time; the rule's
     *     {@code on-error} decides the call
     */
    long acquire(String key);

    /** Keys currently tracked, where the store can tell cheaply; -1 when it cannot. */
    long trackedKeys();

    /**
     * Whether this limiter counts the calls it allows itself ({@link #allowed()}), so that the
     * rule need not count them again.
     */
    default boolean countsAllowed() {
        return false;
    }

    /** The calls allowed so far, when {@link #countsAllowed()}. */
    default long allowed() {
        return 0;
    }
}
