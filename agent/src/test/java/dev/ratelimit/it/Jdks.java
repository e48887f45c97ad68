package dev.ratelimit.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The JDKs the forked-JVM tests run the agent on: the one running the tests, and those listed in
 * the {@code ratelimit.test.jdks} property (comma-separated JDK homes), which the build sets from
 * its default, the {@code RATELIMIT_TEST_JDKS} variable, or {@code -Dratelimit.test.jdks}. A listed JDK that does not exist fails the tests: a JDK silently
 * left out would be a test that did not run.
 */
public final class Jdks {
    private Jdks() {
    }

    public static Stream<Path> all() {
        Set<Path> homes = new LinkedHashSet<>();
        homes.add(Path.of(System.getProperty("java.home")));
        // the build passes the property: its default, replaced by RATELIMIT_TEST_JDKS when that is
        // set, and by -Dratelimit.test.jdks given to Maven over both
        String property = System.getProperty("ratelimit.test.jdks", "");
        for (String entry : property.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            Path home = Path.of(entry.trim());
            if (!Files.isExecutable(home.resolve("bin/java"))) {
                throw new IllegalStateException("JDK " + home + " (from ratelimit.test.jdks / RATELIMIT_TEST_JDKS)"
                        + " has no bin/java; install it or point the property at another JDK");
            }
            homes.add(home);
        }
        return homes.stream();
    }
}
