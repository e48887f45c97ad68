package dev.ratelimit.bootstrap;

/**
 * The runtime's decision for servlet requests, installed into {@link RateLimitBridge}. The
 * request and response are passed as {@code Object}, so one advice serves {@code javax.servlet}
 * and {@code jakarta.servlet} alike; the runtime reads them through the servlet API of their own
 * class loader.
 */
public interface HttpGate {

    /**
     * Called when a servlet entry point starts.
     *
     * @return {@code null} when this entry is not the request's first (a nested filter chain, a
     *     forward, an include, an async or error dispatch: nothing to do);
     *     {@link RateLimitBridge#REJECTED} when the request was rejected and the 429 response
     *     written (the entry point's body is skipped); otherwise the request's facts, which
     *     are handed back to {@link #exit}
     */
    Object enter(Object request, Object response);

    /**
     * Called when the entry point that {@link #enter} answered with facts ends, normally or by
     * an exception.
     *
     * @return {@code true} when {@code thrown} was a rate limit rejection that is now a 429
     *     response, so the exception must not propagate
     */
    boolean exit(Object request, Object response, Object facts, Throwable thrown);
}
