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

    /** What cannot be read, without the argument's class: {@code property 'userId'}. */
    private final String part;

    KeyUnreadableException(String part, String message) {
        super(message);
        this.part = part;
    }

    KeyUnreadableException(String part, String message, Throwable cause) {
        super(message, cause);
        this.part = part;
    }

    /**
     * What cannot be read ({@code property 'userId'}, {@code argument 2}), without the class of
     * the argument it was read from: a rule is reported once per part, not once per class, since
     * a parameter of an interface type may see a class per call (lambdas, proxies).
     */
    public String part() {
        return part;
    }
}
