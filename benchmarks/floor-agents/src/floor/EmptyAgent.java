package floor;

import java.lang.instrument.Instrumentation;

/** A Java agent that does nothing: what {@code -javaagent} itself costs a start-up. */
public final class EmptyAgent {
    private EmptyAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) {
    }
}
