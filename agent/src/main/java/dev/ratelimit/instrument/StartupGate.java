package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.ExceptionCopies;
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
 * <p>The background thread never waits on the gate, nor does the agent's JDK-services thread,
 * which it waits for (nor does any class of the agent's own loader or of the bootstrap loader,
 * which the transformer ignores anyway): a class they load that might need advice is defined as
 * it is and retransformed once the transformer is ready. A wait is
 * bounded by {@link #MAX_WAIT_MILLIS} so that a cycle we cannot foresee (a class loaded inside a
 * static initializer the background thread also needs) costs a delay, not a hang: such a class
 * is retransformed the same way. So are the classes already loaded when the gate was registered
 * (another agent's premain may have loaded application classes), as an attach does with every
 * loaded class.
 */
final class StartupGate implements ClassFileTransformer {
    static final long MAX_WAIT_MILLIS = 10_000;
    /** How often, and how far apart, to look for a class that could not wait (up to 2 s in all). */
    private static final int ESCAPE_ATTEMPTS = 40;
    private static final long ESCAPE_RETRY_MILLIS = 50;

    private final Predicate<String> namedByRules;
    private final ClassLoader agentLoader;
    private final long maxWaitMillis;
    private final CountDownLatch settled = new CountDownLatch(1);
    private final List<Escaped> escaped = new ArrayList<>();
    private final List<Class<?>> loadedBefore = new ArrayList<>();
    /** Guarded by {@link #escaped}: ManagementFactory was loaded before the transformer was in force. */
    private boolean managementFactoryEarly;
    private volatile ClassFileTransformer transformer;
    private volatile boolean failed;
    private volatile Thread builder;
    /** The agent's JDK-services thread, which the start thread waits for: it never waits either. */
    private volatile Thread services;

    StartupGate(RuleSet rules, ClassLoader agentLoader) {
        this(rules, agentLoader, MAX_WAIT_MILLIS);
    }

    StartupGate(RuleSet rules, ClassLoader agentLoader, long maxWaitMillis) {
        // loaded now, in premain, not first inside transform: that load comes through transform too
        ExceptionCopies.defined(null, null);
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

    /**
     * Registers the gate, then remembers the classes loaded before it. In that order a class
     * loaded meanwhile (by another thread: the agent's JDK-services thread, another agent's) is
     * in the snapshot or goes through the gate; in the other order it could be in neither, and
     * be defined without advice for good.
     */
    void register(Instrumentation instrumentation) {
        instrumentation.addTransformer(this, true);
        rememberLoaded(instrumentation.getAllLoadedClasses());
    }

    /**
     * The classes loaded before the gate was registered: those of application class loaders are
     * offered to the transformer again once it is ready (JDK and agent classes never need it).
     */
    void rememberLoaded(Class<?>[] classes) {
        for (Class<?> type : classes) {
            ClassLoader loader = type.getClassLoader();
            String name = type.getName();
            ExceptionCopies.defined(loader, name.replace('.', '/'));
            if (loader == null && name.equals(AdviceTransformer.MANAGEMENT_FACTORY_NAME)) {
                synchronized (escaped) {
                    managementFactoryEarly = true;
                }
            }
            if (loader != null && loader != agentLoader && loader != ClassLoader.getPlatformClassLoader()
                    && !name.startsWith("java.") && !name.startsWith("jdk.") && !name.startsWith("sun.")
                    && !ClassPrefilter.ofTheJdk(type.getModule()) && !type.isArray() && !type.isPrimitive()) {
                loadedBefore.add(type);
            }
        }
    }

    /**
     * {@code thread} never waits here, as the start thread does not: the start thread waits for
     * it. It starts {@code java.util.logging}, which runs the application's logging configuration
     * ({@code java.util.logging.config.class}, handlers): a class that loads there and might need
     * advice is defined as it is and retransformed when the transformer is ready. Had it waited,
     * the two threads would wait on each other until the wait's bound.
     */
    void neverWaits(Thread thread) {
        services = thread;
    }

    /** Runs {@code build} on a daemon thread; it ends with {@link #open} or {@link #fail}. */
    void startBuilding(Runnable build) {
        Thread thread = new Thread(build, "rate-limit-agent-start");
        thread.setDaemon(true);
        // not the starting thread's: an attach starts it on the JVM's Attach Listener, priority 9
        thread.setPriority(Thread.NORM_PRIORITY);
        builder = thread;
        thread.start();
    }

    /**
     * The transformer is ready: from now on every class goes through it. The application classes
     * loaded before the gate, and those defined without it (they could not wait, or the start
     * thread loaded them), are retransformed.
     */
    void open(ClassFileTransformer ready, Instrumentation instrumentation) {
        transformer = ready;
        settled.countDown();
        List<Class<?>> classes = new ArrayList<>();
        for (Class<?> type : loadedBefore) {
            if (instrumentation.isModifiableClass(type)) {
                classes.add(type);
            }
        }
        loadedBefore.clear();
        // A class that could not wait is defined only after its transform call returns: it may
        // not be loaded yet when we first look, so look again for a while.
        for (int attempt = 0; attempt < ESCAPE_ATTEMPTS; attempt++) {
            List<Escaped> late;
            synchronized (escaped) {
                late = new ArrayList<>(escaped);
            }
            if (late.isEmpty()) {
                break;
            }
            List<Escaped> found = new ArrayList<>();
            for (Class<?> type : instrumentation.getAllLoadedClasses()) {
                for (Escaped one : late) {
                    if (one.is(type)) {
                        found.add(one);
                        if (one.waited) {
                            AgentLog.LOG.log(Level.WARNING, "rate-limit-agent: " + one.name + " was loaded before the"
                                    + " agent was ready (waited " + maxWaitMillis + " ms); it is instrumented now");
                        }
                        if (instrumentation.isModifiableClass(type)) {
                            classes.add(type);
                        }
                    }
                }
            }
            synchronized (escaped) {
                escaped.removeAll(found);
                escaped.removeIf(Escaped::isGone);
                if (escaped.isEmpty()) {
                    break;
                }
            }
            sleep(ESCAPE_RETRY_MILLIS);
        }
        synchronized (escaped) {
            for (Escaped one : escaped) {
                AgentLog.LOG.log(Level.WARNING, "rate-limit-agent: " + one.name + " was loaded before the agent was ready and"
                        + " could not be found to instrument it; it runs without limits");
            }
            escaped.clear();
        }
        if (classes.isEmpty()) {
            return;
        }
        List<Class<?>> refused = Retransformation.retransform(instrumentation, classes,
                "(loaded before the agent was ready)");
        AgentLog.LOG.log(Level.DEBUG, "rate-limit-agent: offered " + (classes.size() - refused.size())
                + " classes loaded before the agent was ready to the transformer");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The transformer could not be built: let every class through untouched from now on.
     *
     * @return false if the transformer was already in force (then nothing changes)
     */
    boolean fail() {
        if (transformer != null) {
            return false;
        }
        failed = true;
        settled.countDown();
        return true;
    }

    /** Whether the background build has finished, successfully or not. */
    boolean isSettled() {
        return settled.getCount() == 0;
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String internalName, Class<?> redefined,
            ProtectionDomain domain, byte[] classFile) throws IllegalClassFormatException {
        if (loader == null && AdviceTransformer.MANAGEMENT_FACTORY.equals(internalName)) {
            return managementFactory(module, redefined, domain, classFile);
        }
        if (loader == null || loader == agentLoader) {
            // the JDK's own classes and the agent's: the transformer ignores both
            return null;
        }
        if (internalName == null) {
            // defined with defineClass(null, ...): the name is in the class file
            internalName = ClassPrefilter.nameOf(classFile);
        }
        if (redefined == null) {
            ExceptionCopies.defined(loader, internalName);
        }
        ClassFileTransformer ready = transformer;
        if (ready == null) {
            if (failed || !ClassPrefilter.worthALook(internalName, classFile, namedByRules)) {
                return null;
            }
            Thread current = Thread.currentThread();
            if (current == builder || current == services) {
                // never wait on ourselves, nor on a thread we wait for: defined as it is,
                // retransformed when ready
                escape(loader, internalName, false);
                return null;
            }
            ready = await(loader, internalName);
            if (ready == null) {
                return null;
            }
        }
        return ready.transform(module, loader, internalName, redefined, domain, classFile);
    }

    /**
     * {@code ManagementFactory} never waits: a JDK class may be loaded anywhere, the start thread
     * included. Before the transformer is in force it loads as it is, and the agent then builds the
     * platform MBean server itself ({@link #managementFactoryLoadedEarly}).
     */
    private byte[] managementFactory(Module module, Class<?> redefined, ProtectionDomain domain, byte[] classFile)
            throws IllegalClassFormatException {
        ClassFileTransformer ready;
        synchronized (escaped) {
            ready = transformer;
            if (ready == null) {
                managementFactoryEarly = true;
                return null;
            }
        }
        return ready.transform(module, null, AdviceTransformer.MANAGEMENT_FACTORY, redefined, domain, classFile);
    }

    /**
     * Whether {@code ManagementFactory} was loaded before the transformer was in force (and so was
     * not woven). Read it after {@link #open}: from then on the class is woven as it loads.
     */
    boolean managementFactoryLoadedEarly() {
        synchronized (escaped) {
            return managementFactoryEarly;
        }
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
        // no logging here: this thread may hold a lock (its class's loading lock) that the thread
        // starting java.util.logging waits for, and a log call would wait for that thread in
        // turn; the class is named when it is retransformed (open)
        if (escape(loader, internalName, true)) {
            return null;
        }
        // ready between the timeout and the lock
        return transformer;
    }

    /** Records a class defined untransformed; false if the transformer became ready meanwhile. */
    private boolean escape(ClassLoader loader, String internalName, boolean waited) {
        synchronized (escaped) {
            if (transformer != null) {
                return false;
            }
            escaped.add(new Escaped(loader, internalName.replace('/', '.'), waited));
            return true;
        }
    }

    /** A class defined untransformed because the transformer was late. */
    private static final class Escaped {
        private final WeakReference<ClassLoader> loader;
        private final String name;
        /** It waited the whole bound (not a class of a thread that never waits). */
        private final boolean waited;

        Escaped(ClassLoader loader, String name, boolean waited) {
            this.loader = new WeakReference<>(loader);
            this.name = name;
            this.waited = waited;
        }

        boolean is(Class<?> type) {
            return type.getName().equals(name) && type.getClassLoader() == loader.get();
        }

        boolean isGone() {
            return loader.get() == null;
        }
    }
}
