package dev.ratelimit.instrument;

import dev.ratelimit.config.MethodPattern;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import java.lang.System.Logger.Level;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.IllegalClassFormatException;
import java.lang.instrument.Instrumentation;
import java.lang.ref.WeakReference;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The one class file transformer the agent registers at start-up, before Byte Buddy is ready.
 *
 * <h2>Why</h2>
 *
 * <p>Building the Byte Buddy transformer loads about a thousand classes of the agent's own and
 * takes most of a second on a cold JVM. {@code premain} runs before the application's
 * {@code main}, so doing that work there delays the application by all of it. Instead
 * {@code premain} reads the rule file (an invalid one still stops the JVM at once), registers
 * this gate, and builds the rest on a background thread while the application starts.
 *
 * <h2>What keeps it correct</h2>
 *
 * <p>Until the transformer is ready, the gate lets a class load untouched only if it cannot need
 * instrumenting: its class file names neither the annotation nor a servlet API type, and no method
 * rule names it (the same byte scan as {@link ClassPrefilter}). A class that might need it waits
 * here, inside its own loading, until the transformer is ready and then goes through it, so no
 * class that needs advice is ever defined without it. Once ready, every class goes straight to
 * the transformer; the gate stays registered as its only entry (retransformations of a reload
 * come through it too).
 *
 * <p>The background thread never waits on the gate (nor does any class of the agent's own loader
 * or of the bootstrap loader, which the transformer ignores anyway). A wait is bounded by
 * {@link #MAX_WAIT_MILLIS} so that a cycle we cannot foresee (a class loaded inside a static
 * initializer the background thread also needs) costs a delay, not a hang: such a class is
 * defined as it is and retransformed as soon as the transformer is ready.
 */
final class StartupGate implements ClassFileTransformer {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");
    static final long MAX_WAIT_MILLIS = 10_000;

    private final Predicate<String> namedByRules;
    private final ClassLoader agentLoader;
    private final long maxWaitMillis;
    private final CountDownLatch settled = new CountDownLatch(1);
    private final List<Escaped> escaped = new ArrayList<>();
    private volatile ClassFileTransformer transformer;
    private volatile boolean failed;
    private volatile Thread builder;

    StartupGate(RuleSet rules, ClassLoader agentLoader) {
        this(rules, agentLoader, MAX_WAIT_MILLIS);
    }

    StartupGate(RuleSet rules, ClassLoader agentLoader, long maxWaitMillis) {
        List<MethodPattern> patterns = new ArrayList<>();
        for (RuleConfig rule : rules.rules()) {
            if (rule.methodPattern() != null) {
                patterns.add(rule.methodPattern());
            }
        }
        this.namedByRules = name -> {
            for (MethodPattern pattern : patterns) {
                if (pattern.matchesClass(name)) {
                    return true;
                }
            }
            return false;
        };
        this.agentLoader = agentLoader;
        this.maxWaitMillis = maxWaitMillis;
    }

    /** Runs {@code build} on a daemon thread; it ends with {@link #open} or {@link #fail}. */
    void startBuilding(Runnable build) {
        Thread thread = new Thread(build, "rate-limit-agent-start");
        thread.setDaemon(true);
        builder = thread;
        thread.start();
    }

    /**
     * The transformer is ready: from now on every class goes through it, and the classes that
     * could not wait (if any) are retransformed.
     */
    void open(ClassFileTransformer ready, Instrumentation instrumentation) {
        transformer = ready;
        settled.countDown();
        List<Escaped> late;
        synchronized (escaped) {
            late = new ArrayList<>(escaped);
            escaped.clear();
        }
        if (late.isEmpty()) {
            return;
        }
        List<Class<?>> classes = new ArrayList<>();
        for (Class<?> type : instrumentation.getAllLoadedClasses()) {
            for (Escaped one : late) {
                if (one.is(type) && instrumentation.isModifiableClass(type)) {
                    classes.add(type);
                }
            }
        }
        try {
            if (!classes.isEmpty()) {
                instrumentation.retransformClasses(classes.toArray(new Class<?>[0]));
            }
            LOG.log(Level.INFO, "rate-limit-agent: retransformed " + classes.size()
                    + " classes loaded while the agent was starting");
        } catch (Exception | LinkageError e) {
            LOG.log(Level.WARNING, "rate-limit-agent: could not retransform " + classes.size()
                    + " classes loaded while the agent was starting: " + e);
        }
    }

    /** The transformer could not be built: let every class through untouched from now on. */
    void fail() {
        failed = true;
        settled.countDown();
    }

    /** Whether the background build has finished, successfully or not. */
    boolean isSettled() {
        return settled.getCount() == 0;
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String internalName, Class<?> redefined,
            ProtectionDomain domain, byte[] classFile) throws IllegalClassFormatException {
        if (loader == null || loader == agentLoader) {
            // the JDK's own classes and the agent's: the transformer ignores both
            return null;
        }
        ClassFileTransformer ready = transformer;
        if (ready == null) {
            if (failed || Thread.currentThread() == builder
                    || !ClassPrefilter.worthALook(internalName, classFile, namedByRules)) {
                return null;
            }
            ready = await(loader, internalName);
            if (ready == null) {
                return null;
            }
        }
        return ready.transform(module, loader, internalName, redefined, domain, classFile);
    }

    private ClassFileTransformer await(ClassLoader loader, String internalName) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMillis);
        try {
            while (true) {
                try {
                    if (settled.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        return transformer;
                    }
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (escaped) {
            if (transformer == null) {
                escaped.add(new Escaped(loader, internalName.replace('/', '.')));
                LOG.log(Level.WARNING, "rate-limit-agent: " + internalName.replace('/', '.') + " was loaded before the"
                        + " agent was ready (waited " + maxWaitMillis + " ms); it will be instrumented when it is");
                return null;
            }
        }
        // ready between the timeout and the lock
        return transformer;
    }

    /** A class defined untransformed because the transformer was late. */
    private static final class Escaped {
        private final WeakReference<ClassLoader> loader;
        private final String name;

        Escaped(ClassLoader loader, String name) {
            this.loader = new WeakReference<>(loader);
            this.name = name;
        }

        boolean is(Class<?> type) {
            return type.getName().equals(name) && type.getClassLoader() == loader.get();
        }
    }
}
