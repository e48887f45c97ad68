package dev.ratelimit.limit;

/**
 * One {@code {limit, window}} pair of a rule, counted by one algorithm.
 *
 * <p>Implementations are immutable and shared by every key of a rule; the per-key state they
 * create with {@link #newState(boolean)} is the only mutable part, updated with one atomic operation per
 * call whose own result decides the call (increment-first).
 */
interface LimitAlgorithm {

    /**
     * Fresh state for a key seen for the first time.
     *
     * @param exhausted whether the key is known to be over this limit until its window ends (its
     *     previous state was evicted while it was being rejected): the state starts used up
     */
    Object newState(boolean exhausted);

    /**
     * Counts one call against {@code state} and decides it.
     *
     * @return an {@link Outcome}
     */
    long acquire(Object state);

    /** How long a key's state is worth keeping after its last call. */
    long retentionMillis();

    /**
     * Called once when the key owning {@code state} has left the store (evicted or expired).
     * Calls that read the state before may still reach it.
     */
    default void close(Object state) {
    }
}
