package dev.ratelimit.bootstrap;

/**
 * The runtime's decision for an instrumented method, installed into {@link RateLimitBridge}.
 * JDK types only, so the bridge can hold it without seeing the runtime.
 */
public interface MethodGate {

    /**
     * Counts one call of the instrumented method {@code site} and decides it.
     *
     * @param site the id the method was given when it was instrumented
     * @param arguments the call's arguments, or {@code null} when no rule of the site reads them
     * @return {@code null} to let the call proceed; a {@link CallScope} to let it proceed and be
     *     told when it ends; a {@link RuntimeException} to throw instead of
     *     running the method; or {@link RateLimitBridge#RETURN_DEFAULT} to return the method's
     *     type default instead of running it
     */
    Object enter(int site, Object[] arguments);
}
