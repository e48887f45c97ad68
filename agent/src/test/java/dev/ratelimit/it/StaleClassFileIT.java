package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A retransformation (here of a hot reload that adds a rule for another method of the class) must
 * weave what the loaded class says, even when its loader's {@code getResource} serves another
 * version of its class file: a child-first loader defines {@code app.Svc} version 2, whose
 * {@code call()} carries {@code @RateLimited(limit = 2)}, over version 1 without it on the class
 * path. The agent reads annotations of class retention from the loader's file on a
 * retransformation (the JVM's rebuilt file drops them), but never in place of the loaded class's
 * own: {@code call()} once lost its limit at the reload (review of the twenty-first round).
 */
class StaleClassFileIT {
    private static final String SVC = "package app;\npublic class Svc {\n%s    public String call() {\n"
            + "        return \"call\";\n    }\n\n    public String other() {\n        return \"other\";\n    }\n}\n";
    private static final String MAIN = String.join("\n",
            "package app;",
            "",
            "import java.lang.reflect.InvocationTargetException;",
            "import java.lang.reflect.Method;",
            "import java.net.URL;",
            "import java.net.URLClassLoader;",
            "import java.nio.file.Files;",
            "import java.nio.file.Path;",
            "",
            "public class Main {",
            "    /** Loads app.* from its own URLs first, everything else from its parent. */",
            "    static final class ChildFirst extends URLClassLoader {",
            "        ChildFirst(URL url) {",
            "            super(new URL[] {url}, Main.class.getClassLoader());",
            "        }",
            "",
            "        @Override",
            "        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {",
            "            synchronized (getClassLoadingLock(name)) {",
            "                if (name.equals(\"app.Svc\")) {",
            "                    Class<?> c = findLoadedClass(name);",
            "                    return c != null ? c : findClass(name);",
            "                }",
            "                return super.loadClass(name, resolve);",
            "            }",
            "        }",
            "    }",
            "",
            "    static boolean passes(Object svc, Method m) throws Exception {",
            "        try {",
            "            m.invoke(svc);",
            "            return true;",
            "        } catch (InvocationTargetException e) {",
            "            if (e.getCause().getClass().getSimpleName().equals(\"RateLimitExceededException\")) {",
            "                return false;",
            "            }",
            "            throw e;",
            "        }",
            "    }",
            "",
            "    public static void main(String[] args) throws Exception {",
            "        Class<?> type = new ChildFirst(Path.of(args[0]).toUri().toURL()).loadClass(\"app.Svc\");",
            "        Object svc = type.getConstructor().newInstance();",
            "        Method call = type.getMethod(\"call\");",
            "        Method other = type.getMethod(\"other\");",
            "        int before = 0;",
            "        for (int i = 0; i < 2; i++) {",
            "            before += passes(svc, call) ? 1 : 0;",
            "        }",
            "        Files.writeString(Path.of(args[1]), args[2]);",
            "        long deadline = System.nanoTime() + 20_000_000_000L;",
            "        boolean reloaded = false;",
            "        while (!reloaded && System.nanoTime() < deadline) {",
            "            reloaded = !passes(svc, other);",
            "            Thread.sleep(50);",
            "        }",
            "        int after = 0;",
            "        for (int i = 0; i < 3; i++) {",
            "            after += passes(svc, call) ? 1 : 0;",
            "        }",
            "        System.out.println(\"before=\" + before + \" reloaded=\" + reloaded + \" after=\" + after);",
            "    }",
            "}",
            "");

    @TempDir
    static Path dir;

    static Stream<Path> jdks() {
        return Jdks.all();
    }

    private static void compile(Path to, String classPath, Path... sources) {
        String[] args = new String[6 + sources.length];
        args[0] = "--release";
        args[1] = "11";
        args[2] = "-cp";
        args[3] = classPath;
        args[4] = "-d";
        args[5] = to.toString();
        for (int i = 0; i < sources.length; i++) {
            args[6 + i] = sources[i].toString();
        }
        assertEquals(0, ToolProvider.getSystemJavaCompiler().run(null, null, null, args), "compiles");
    }

    @ParameterizedTest
    @MethodSource("jdks")
    void aRetransformationWeavesWhatTheLoadedClassSays(Path jdk) throws Exception {
        Path work = Files.createTempDirectory(dir, "run");
        Path src1 = Files.createDirectories(work.resolve("src1/app"));
        Path src2 = Files.createDirectories(work.resolve("src2/app"));
        Files.writeString(src1.resolve("Svc.java"), String.format(SVC, ""));
        Files.writeString(src2.resolve("Svc.java"),
                String.format(SVC, "    @dev.ratelimit.annotation.RateLimited(limit = 2, window = \"1h\")\n"));
        Files.writeString(src1.resolve("Main.java"), MAIN);
        String api = ForkedJvm.applicationClassPath();
        compile(work.resolve("v1"), api, src1.resolve("Svc.java"), src1.resolve("Main.java"));
        compile(work.resolve("v2"), api, src2.resolve("Svc.java"));

        String first = "version: 1\nrules: []\n";
        String second = "version: 1\nrules:\n  - name: other\n    match:\n      method: app.Svc#other\n"
                + "    limit: 1\n    window: 1h\n";
        Path rules = Files.writeString(work.resolve("rules.yaml"), first);
        ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                "-cp", work.resolve("v1") + File.pathSeparator + api,
                "app.Main", work.resolve("v2").toString(), rules.toString(), second), Duration.ofSeconds(60));
        String output = result.stdout + result.stderr;
        assertEquals(0, result.exitCode, output);
        assertTrue(result.stdout.contains("before=2 reloaded=true after=0"), output);
    }
}
