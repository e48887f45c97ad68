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

    /**
     * Counts one call as {@link #acquire} does, for a rule with several limits, and puts into
     * {@code counted[slot]} what {@link #refund} needs to take the call back out.
     *
     * @return an {@link Outcome}
     */
    long acquire(Object state, Object[] counted, int slot);

    /**
     * Takes back out a call this limit allowed and another limit of the rule refused, so that a
     * refused call uses up none of the rule's limits. It only lowers what was counted: a call
     * racing it may be refused, never wrongly allowed.
     *
     * @param counted what {@link #acquire(Object, Object[], int)} put in its slot
     */
    void refund(Object counted);

    /**
     * Whether the next call counted against {@code state} now would be refused: the key is at or
     * over this limit. A key evicted so is kept (see {@code KeyStore}).
     */
    boolean spent(Object state);

    /** How long a key's state is worth keeping after its last call. */
    long retentionMillis();

    /**
     * Called once when the key owning {@code state} has left the store (evicted or expired).
     * Calls that read the state before may still reach it.
     */
    default void close(Object state) {
    }
}
