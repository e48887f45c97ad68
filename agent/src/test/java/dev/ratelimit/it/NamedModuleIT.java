package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An application that is a named module (JPMS), run from the module path with {@code -m}: its
 * annotated method and the method a YAML pattern names are limited, and its own
 * {@code catch (RateLimitExceededException e)} catches the rejections. The woven code calls the
 * bridge, in the boot loader's unnamed module, which an explicit module does not read by default:
 * the JVM adds that read edge itself to a module whose classes load while a class file transformer
 * is registered (JVMTI's default read edges), and the agent adds it where it is missing. The
 * module requires the API jar by its stable name, {@code dev.ratelimit} (the jar's
 * Automatic-Module-Name), and its catch names the copy of the exception in that jar.
 */
class NamedModuleIT {
    private static final String MAIN = String.join("\n",
            "package demo.mod;",
            "",
            "import dev.ratelimit.RateLimitExceededException;",
            "import dev.ratelimit.annotation.RateLimited;",
            "",
            "public class Main {",
            "    @RateLimited(limit = 2, window = \"1h\")",
            "    static String annotated() {",
            "        return \"ok\";",
            "    }",
            "",
            "    static String patterned() {",
            "        return \"ok\";",
            "    }",
            "",
            "    interface Call {",
            "        String run();",
            "    }",
            "",
            "    static void calls(String name, Call call) {",
            "        int passed = 0;",
            "        int caught = 0;",
            "        for (int i = 0; i < 5; i++) {",
            "            try {",
            "                call.run();",
            "                passed++;",
            "            } catch (RateLimitExceededException e) {",
            "                caught++;",
            "            }",
            "        }",
            "        System.out.println(name + \" passed=\" + passed + \" caught=\" + caught);",
            "    }",
            "",
            "    public static void main(String[] args) {",
            "        calls(\"annotated\", Main::annotated);",
            "        calls(\"patterned\", Main::patterned);",
            "        System.out.println(\"in \" + Main.class.getModule());",
            "    }",
            "}",
            "");

    /** An application module whose name starts with jdk., which javac and java allow: not the JDK's. */
    private static final String BILLING = String.join("\n",
            "package org.acme;",
            "",
            "public class Billing {",
            "    static String charge() {",
            "        return \"ok\";",
            "    }",
            "",
            "    public static void main(String[] args) {",
            "        int passed = 0;",
            "        int caught = 0;",
            "        for (int i = 0; i < 5; i++) {",
            "            try {",
            "                charge();",
            "                passed++;",
            "            } catch (dev.ratelimit.RateLimitExceededException e) {",
            "                caught++;",
            "            }",
            "        }",
            "        System.out.println(\"charge passed=\" + passed + \" caught=\" + caught + \" in \" + Billing.class.getModule());",
            "    }",
            "}",
            "");

    @TempDir
    static Path dir;
    private static Path modules;
    private static Path apiJar;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    @BeforeAll
    static void compileTheModule() throws Exception {
        apiJar = apiJar();
        try (JarFile jar = new JarFile(apiJar.toFile())) {
            assertEquals("dev.ratelimit", jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name"));
        }
        modules = dir.resolve("mods");
        compile("demo.mod", "demo/mod/Main.java", MAIN);
        compile("jdk.acme", "org/acme/Billing.java", BILLING);
    }

    /** Compiles {@code module}, of one class at {@code path}, requiring the API jar, into the module path. */
    private static void compile(String module, String path, String text) throws java.io.IOException {
        Path source = dir.resolve("src").resolve(module);
        Files.createDirectories(source.resolve(path).getParent());
        Files.writeString(source.resolve("module-info.java"), "module " + module + " {\n    requires dev.ratelimit;\n}\n");
        Files.writeString(source.resolve(path), text);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int status = javac.run(null, null, null, "--release", "11", "--module-path", apiJar.toString(),
                "-d", modules.resolve(module).toString(),
                source.resolve("module-info.java").toString(), source.resolve(path).toString());
        assertEquals(0, status, module + " compiles");
    }

    /** Runs {@code main} (module/class) from the module path under the agent with {@code rules}; it must exit 0. */
    private static ForkedJvm.Result run(Path jdk, Path rules, String main) throws Exception {
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "--module-path", modules + File.pathSeparator + apiJar,
                "-m", main), Duration.ofSeconds(60));
        assertEquals(0, result.exitCode, () -> result.stdout + result.stderr);
        return result;
    }

    /** The API jar the build made (the module path needs the jar, not a directory of classes). */
    private static Path apiJar() {
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (name.startsWith("rate-limit-annotations-") && name.endsWith(".jar")) {
                return Path.of(entry);
            }
        }
        Path built = ForkedJvm.agentJar().getParent().getParent().getParent().resolve("annotations/target");
        try (Stream<Path> files = Files.list(built)) {
            return files.filter(p -> p.getFileName().toString().matches("rate-limit-annotations-[0-9.]+(-SNAPSHOT)?\\.jar"))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no API jar in " + built));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aNamedModuleIsLimitedAndCatchesItsRejections(Path jdk) throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "version: 1\nrules:\n  - name: patterned\n"
                + "    match:\n      method: demo.mod.Main#patterned\n    limit: 3\n    window: 1h\n");
        ForkedJvm.Result result = run(jdk, rules, "demo.mod/demo.mod.Main");
        String output = result.stdout + result.stderr;
        assertTrue(result.stdout.contains("annotated passed=2 caught=3"), output);
        assertTrue(result.stdout.contains("patterned passed=3 caught=2"), output);
        assertTrue(result.stdout.contains("in module demo.mod"), output);
        assertTrue(!output.contains("AgentErrors") && !output.contains("could not"), output);
    }

    /**
     * An application's module named {@code jdk.acme} is limited: the JDK's modules are told by
     * where they come from (the run-time image), not by name alone. A review found such a module,
     * and an automatic module named {@code java.annotation} (javax.annotation-api), never limited
     * on the module path, though limited on the class path.
     */
    @ParameterizedTest
    @MethodSource("jdks")
    void anApplicationModuleNamedLikeTheJdksIsLimited(Path jdk) throws Exception {
        Path rules = Files.writeString(dir.resolve("billing.yaml"), "version: 1\nrules:\n  - name: billing\n"
                + "    match:\n      method: org.acme.Billing#charge\n    limit: 2\n    window: 1h\n");
        ForkedJvm.Result result = run(jdk, rules, "jdk.acme/org.acme.Billing");
        String output = result.stdout + result.stderr;
        assertTrue(result.stdout.contains("charge passed=2 caught=3 in module jdk.acme"), output);
    }
}
