package dev.ratelimit.limit;

/**
 * What the application's own code threw when the agent called it for a key (a getter, a
 * {@code toString}, a {@code Principal}), as the agent reports it: the exception's class and
 * where it was thrown, without its message or its causes. The message may hold what the code was
 * about (a user id, a token), and the agent logs what it reports.
 */
public final class ThrownByApplication {
    private ThrownByApplication() {
    }

    /**
     * @param what the call, such as {@code "reading property 'id' of app.User"}
     * @param thrown what it threw
     * @return an exception naming the call and the class thrown, with the thrown one's stack trace
     */
    public static IllegalStateException report(String what, Throwable thrown) {
        IllegalStateException reported = new IllegalStateException(what + " threw " + thrown.getClass().getName()
                + " (its message is left out of the agent's logs)");
        reported.setStackTrace(thrown.getStackTrace());
        return reported;
    }
}
