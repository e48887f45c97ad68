package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * Lists the finished jar: the application must be able to load no class of ours but the bridge
 * and the API, and nothing of the shaded libraries.
 */
class AgentJarContentsIT {

    private static List<String> entries() throws IOException {
        List<String> names = new ArrayList<>();
        try (JarFile jar = new JarFile(ForkedJvm.agentJar().toFile())) {
            for (JarEntry entry : java.util.Collections.list(jar.entries())) {
                names.add(entry.getName());
            }
        }
        return names;
    }

    @Test
    void onlyTheBridgeAndTheApiAreLoadableClasses() throws IOException {
        List<String> loadable = new ArrayList<>();
        for (String name : entries()) {
            if (name.endsWith(".class") && !name.startsWith("dev/ratelimit/bootstrap/")
                    && !name.equals("dev/ratelimit/RateLimitExceededException.class")
                    && !name.equals("dev/ratelimit/annotation/RateLimited.class")) {
                loadable.add(name);
            }
        }
        assertEquals(List.of(), loadable);
    }

    @Test
    void noMultiReleaseOrModuleEntriesOfDependencies() throws IOException {
        List<String> bad = new ArrayList<>();
        for (String name : entries()) {
            if (name.contains("META-INF/versions/") || name.endsWith("module-info.class")
                    || name.endsWith("module-info.classdata") || name.contains("org/checkerframework")
                    || name.contains("com/google/errorprone") || name.contains("org/jspecify")) {
                bad.add(name);
            }
        }
        assertEquals(List.of(), bad);
    }

    @Test
    void theRuntimeAndDependenciesAreHiddenAndRelocated() throws IOException {
        List<String> entries = entries();
        List<String> unrelocated = new ArrayList<>();
        for (String name : entries) {
            if (name.startsWith("inst/") && name.endsWith(".classdata") && !name.startsWith("inst/dev/ratelimit/")) {
                unrelocated.add(name);
            }
        }
        assertEquals(List.of(), unrelocated);
        assertTrue(entries.contains("inst/dev/ratelimit/shaded/net/bytebuddy/ByteBuddy.classdata"));
        assertTrue(entries.contains("inst/dev/ratelimit/shaded/com/github/benmanes/caffeine/cache/Caffeine.classdata"));
        assertTrue(entries.contains("inst/dev/ratelimit/instrument/AgentInstaller.classdata"));
        assertTrue(entries.stream().anyMatch(n -> n.startsWith("inst/dev/ratelimit/shaded/org/snakeyaml/engine/")));
    }

    @Test
    void manifestNamesTheEntryPoints() throws IOException {
        try (JarFile jar = new JarFile(ForkedJvm.agentJar().toFile())) {
            Attributes main = jar.getManifest().getMainAttributes();
            assertEquals("dev.ratelimit.bootstrap.AgentLauncher", main.getValue("Premain-Class"));
            assertEquals("dev.ratelimit.bootstrap.AgentLauncher", main.getValue("Agent-Class"));
            assertEquals("dev.ratelimit.bootstrap.AgentLauncher", main.getValue("Main-Class"));
            assertEquals("true", main.getValue("Can-Retransform-Classes"));
        }
    }
}
