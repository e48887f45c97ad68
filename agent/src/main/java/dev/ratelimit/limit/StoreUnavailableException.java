package dev.ratelimit.limit;

/**
 * A store could not answer in time (down, hung, refusing, or out of memory). The rule's
 * {@code on-error} decides the call. Carries no stack trace: during an outage every call gets one.
 */
public final class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
