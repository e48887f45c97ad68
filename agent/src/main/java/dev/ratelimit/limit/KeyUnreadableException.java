package dev.ratelimit.limit;

/**
 * A rule's key cannot be read from a call's arguments, and no application code is at fault: the
 * argument's class has no such property, the agent may not read it (a module that does not open
 * it), its class's methods cannot be listed, or the method has no such argument. A mismatch
 * between the rule and the code, which the message names in full, so it is reported without a
 * stack trace (the agent's own frames say nothing more); what the application's code throws
 * while the agent reads a key is reported by {@link ThrownByApplication} instead.
 */
public final class KeyUnreadableException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    KeyUnreadableException(String message) {
        super(message);
    }

    KeyUnreadableException(String message, Throwable cause) {
        super(message, cause);
    }
}
