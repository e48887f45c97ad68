package dev.ratelimit.bootstrap;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.net.URISyntaxException;
import java.util.jar.JarFile;

/**
 * The entry points the JVM calls: {@code premain} for {@code -javaagent}, {@code agentmain} for
 * dynamic attach, and {@code main} for {@code java -jar rate-limit-agent.jar COMMAND}.
 *
 * <p><b>Important</b>: this class is loaded by the system class loader before the agent jar is
 * on the bootstrap class path. It must not mention any other class of ours in a signature or a
 * field type, or verification of this class could load that class from the wrong loader. It
 * reaches the runtime only by reflection, and catches everything: a broken agent must never stop
 * the host from starting.
 */
public final class AgentLauncher {
    private static final String INSTALLER = "dev.ratelimit.instrument.AgentInstaller";
    private static final String COMMAND_LINE = "dev.ratelimit.cli.CommandLine";

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
            installer.getMethod("install", String.class, Instrumentation.class, boolean.class)
                    .invoke(null, options, instrumentation, attached);
        } catch (InvocationTargetException e) {
            System.err.println("[rate-limit-agent] could not start; the application runs without rate limits: "
                    + e.getCause());
        } catch (Throwable t) {
            System.err.println("[rate-limit-agent] could not start; the application runs without rate limits: " + t);
        }
    }

    private static File agentJar() throws URISyntaxException {
        return new File(AgentLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
