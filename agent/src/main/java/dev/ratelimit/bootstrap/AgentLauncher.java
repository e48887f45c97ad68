package dev.ratelimit.bootstrap;

import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;

/**
 * The entry points the JVM calls: {@code premain} for {@code -javaagent}, {@code agentmain} for
 * dynamic attach, and {@code main} for {@code java -jar rate-limit-agent.jar COMMAND}.
 *
 * <p><b>Important</b>: this class is loaded by the system class loader before the agent jar is
 * on the bootstrap class path. It must not mention any other class of ours in a signature or a
 * field type, or verification of this class could load that class from the wrong loader. It
 * reaches the runtime only by name (reflection, or a method handle where that costs less), and
 * catches everything: a broken agent must never stop the host from starting.
 */
public final class AgentLauncher {
    private static final String INSTALLER = "dev.ratelimit.instrument.AgentInstaller";
    private static final String COMMAND_LINE = "dev.ratelimit.cli.CommandLine";
    private static final String RUNTIME_MARKER = "inst/" + INSTALLER.replace('.', '/') + ".classdata";

    private AgentLauncher() {
    }

    /** Called by the JVM for {@code -javaagent:rate-limit-agent.jar=OPTIONS}. */
    public static void premain(String options, Instrumentation instrumentation) {
        launch(options, instrumentation, false);
    }

    /** Called by the JVM when the agent is attached to a running process. */
    public static void agentmain(String options, Instrumentation instrumentation) {
        launch(options, instrumentation, true);
    }

    /** {@code java -jar rate-limit-agent.jar COMMAND ...}. */
    public static void main(String[] args) throws Exception {
        File jar = agentJar();
        ClassLoader runtime = RuntimeClassLoader.open(new JarFile(jar, false), jar);
        Class<?> commandLine = Class.forName(COMMAND_LINE, true, runtime);
        int status;
        try {
            status = (Integer) commandLine.getMethod("run", String[].class, File.class).invoke(null, args, jar);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
        System.exit(status);
    }

    private static void launch(String options, Instrumentation instrumentation, boolean attached) {
        Class<?> installer;
        try {
            File jar = agentJar();
            JarFile jarFile = new JarFile(jar, false);
            instrumentation.appendToBootstrapClassLoaderSearch(jarFile);
            ClassLoader runtime = RuntimeClassLoader.open(jarFile, jar);
            installer = Class.forName(INSTALLER, true, runtime);
        } catch (Throwable t) {
            System.err.println("[rate-limit-agent] could not start; the application runs without rate limits: " + t);
            return;
        }
        try {
            if (Runtime.version().feature() >= 18) {
                // Since Java 18 reflection calls through method handles it spins for the call
                // (JEP 416): a handle called with its exact type costs less (premain-ab.sh: -16 and
                // -24 ms to main in two runs on Java 25). On Java 17 reflection's first calls are
                // native, and cheaper than building the handle (+4 ms).
                MethodHandle install = MethodHandles.publicLookup().findStatic(installer, "install",
                        MethodType.methodType(void.class, String.class, Instrumentation.class, boolean.class));
                install.invokeExact(options, instrumentation, attached);
            } else {
                installer.getMethod("install", String.class, Instrumentation.class, boolean.class)
                        .invoke(null, options, instrumentation, attached);
            }
        } catch (InvocationTargetException e) {
            System.err.println("[rate-limit-agent] could not start; the application runs without rate limits: "
                    + e.getCause());
            failed(attached, e.getCause());
        } catch (Throwable t) {
            System.err.println("[rate-limit-agent] could not start; the application runs without rate limits: " + t);
            failed(attached, t);
        }
    }

    /**
     * Records the failure of the agent loaded with the JVM, for a later attach to report. Not an
     * attach's: one that failed after registering its transformer is limiting, and one that failed
     * before released its claim.
     */
    private static void failed(boolean attached, Throwable why) {
        if (!attached) {
            RateLimitBridge.startFailed(String.valueOf(why));
        }
    }

    /**
     * The agent jar: the one this class came from, unless that is a copy without the runtime (the
     * build's unshaded jar on the application's class path is searched before the agent jar the
     * JVM appends); then the class path entry that holds the runtime.
     */
    private static File agentJar() throws URISyntaxException, IOException {
        File own = new File(AgentLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        if (holdsRuntime(own)) {
            return own;
        }
        List<String> candidates = new ArrayList<>();
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith("-javaagent:")) {
                String path = argument.substring("-javaagent:".length());
                int options = path.indexOf('=');
                candidates.add(options < 0 ? path : path.substring(0, options));
            }
        }
        candidates.addAll(List.of(System.getProperty("java.class.path", "").split(File.pathSeparator)));
        for (String candidate : candidates) {
            File file = new File(candidate);
            if (holdsRuntime(file)) {
                return file;
            }
        }
        return own;
    }

    private static boolean holdsRuntime(File jar) throws IOException {
        if (!jar.isFile()) {
            return false;
        }
        try (JarFile file = new JarFile(jar, false)) {
            return file.getJarEntry(RUNTIME_MARKER) != null;
        }
    }
}
