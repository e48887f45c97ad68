package dev.ratelimit.bootstrap;

/**
 * A limited call in progress under rules that were counted on entry and must not be counted
 * again by a call it makes (an overload delegating to another under the same rule, a method
 * calling itself). A {@link MethodGate} returns one from {@code enter} when the call is allowed;
 * the exit advice closes it, on return and on a throw alike.
 */
public abstract class CallScope {
    protected CallScope() {
    }

    /** Ends the call: the rules it entered may be counted again on this thread. */
    public abstract void close();
}
