package floor;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The advice floor ({@link AdviceFloorAgent}) plus a thread that burns a given amount of CPU
 * ({@code burn=MILLIS}, read from {@code /proc/thread-self/schedstat}) as soon as {@code premain}
 * returns, and does nothing else. It measures what a start thread's CPU alone costs the
 * application's start-up on this machine, whatever that CPU is spent on.
 */
public final class BurnFloorAgent {
    private static final Path SCHEDSTAT = Path.of("/proc/thread-self/schedstat");

    private BurnFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) {
        long millis = Long.parseLong(options.replaceFirst("^.*burn=([0-9]+).*$", "$1"));
        AdviceFloorAgent.premain(options, instrumentation);
        Thread burn = new Thread(() -> burn(millis), "burn-floor");
        burn.setDaemon(true);
        burn.start();
    }

    private static void burn(long millis) {
        try {
            long until = cpuNanos() + millis * 1_000_000;
            long sink = 0;
            while (cpuNanos() < until) {
                for (int i = 0; i < 100_000; i++) {
                    sink += i * 31L ^ sink >>> 3;
                }
            }
            if (sink == 42) {
                System.out.println("burn floor agent: " + sink);
            }
        } catch (IOException e) {
            System.err.println("burn floor agent: cannot read " + SCHEDSTAT + ": " + e);
        }
    }

    /** This thread's CPU time, ns: the first field of its schedstat. */
    private static long cpuNanos() throws IOException {
        String line = Files.readString(SCHEDSTAT);
        return Long.parseLong(line.substring(0, line.indexOf(' ')));
    }
}
