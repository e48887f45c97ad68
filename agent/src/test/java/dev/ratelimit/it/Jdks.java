package dev.ratelimit.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The JDKs the forked-JVM tests run the agent on: the one running the tests, and those listed in
 * the {@code ratelimit.test.jdks} property or the {@code RATELIMIT_TEST_JDKS} variable
 * (comma-separated JDK homes). A listed JDK that does not exist fails the tests: a JDK silently
 * left out would be a test that did not run.
 */
public final class Jdks {
    private Jdks() {
    }

    public static Stream<Path> all() {
        Set<Path> homes = new LinkedHashSet<>();
        homes.add(Path.of(System.getProperty("java.home")));
        List<String> listed = new ArrayList<>();
        String property = System.getProperty("ratelimit.test.jdks", "");
        String env = System.getenv("RATELIMIT_TEST_JDKS");
        listed.addAll(List.of(property.split(",")));
        if (env != null) {
            listed.addAll(List.of(env.split(",")));
        }
        for (String entry : listed) {
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
