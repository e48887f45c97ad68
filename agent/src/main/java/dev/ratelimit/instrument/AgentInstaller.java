package dev.ratelimit.instrument;

import dev.ratelimit.AgentThreads;
import dev.ratelimit.Version;
import dev.ratelimit.bootstrap.ExceptionCopies;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.config.ConfigError;
import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleFileWatcher;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.config.TokenSource;
import dev.ratelimit.http.HttpRequests;
import dev.ratelimit.jmx.JmxRegistry;
import dev.ratelimit.store.LimiterFactory;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.ConsoleHandler;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import javax.management.MBeanServer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.MethodList;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.implementation.bytecode.member.MethodInvocation;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;

/**
 * Installs the agent: reads the options and the rule file, connects the bridge to the runtime,
 * and registers the Byte Buddy transformer.
 *
 * <h2>Design</h2>
 *
 * <p>Class loading (see DESIGN.md, section 1): this class runs in the agent's own
 * {@code RuntimeClassLoader}. Advice inlined into application classes calls only the bridge
 * ({@link RateLimitBridge}, on the bootstrap class path), which holds this runtime's decision
 * function. Application classes never see a runtime class, so the agent works the same under
 * parent-first, child-first and platform-parented class loaders.
 *
 * <p>Fail-open: the bridge answers "allow" whenever the runtime throws, counts it and logs it
 * once; a class that fails to instrument stays as it was. The one thing that stops the JVM is an
 * invalid rule file at start-up (exit code {@value #CONFIG_ERROR_EXIT}), because running with a
 * limit silently dropped is worse than not starting, unless {@code on-config-error=disable}.
 */
public final class AgentInstaller {
    /** EX_CONFIG of sysexits.h. */
    static final int CONFIG_ERROR_EXIT = 78;
    /** Where an attached agent leaves its report for the {@code attach} command to read. */
    public static final String ATTACH_REPORT_PROPERTY = "dev.ratelimit.attach.report";

    /** How the report of an attach that registered its transformer but did not finish begins. */
    public static final String ATTACHED_UNFINISHED = "attached, but did not finish starting";

    private static final int RETRANSFORM_BATCH = 100;
    private static final long RETRANSFORM_PAUSE_MILLIS = 10;
    private static final long IDLE_RULE_REPORT_DELAY_MILLIS = 60_000;

    private final Instrumentation instrumentation;
    private final MethodSites sites;
    private final TransformationErrors listener = new TransformationErrors();
    private final RuleReloader reloader;
    private final JmxRegistry jmx;
    private volatile RuleBook rules;

    private AgentInstaller(Instrumentation instrumentation, Path configPath, RuleSet ruleSet) {
        this.instrumentation = instrumentation;
        this.rules = new RuleBook(ruleSet, LimiterFactory.of(ruleSet.store()), null, this::ruleCreated);
        this.sites = new MethodSites(rules);
        this.reloader = new RuleReloader(this, configPath);
        this.jmx = new JmxRegistry(name -> rules.rule(name), reloader);
    }

    /** Called by {@code AgentLauncher} through reflection. */
    public static void install(String optionText, Instrumentation instrumentation, boolean attached) {
        if (!RateLimitBridge.claimInstallation()) {
            String failed = RateLimitBridge.startFailure();
            if (failed != null) {
                // the agent loaded with this JVM claimed it and failed to start: it limits
                // nothing, and what it left half-built cannot be started over. Or an earlier
                // attach registered its transformer and then failed: in force, but not whole
                String why = failed.startsWith(ATTACHED_UNFINISHED)
                        ? "not attached: an earlier attach is in force but did not finish starting ("
                                + failed.substring(ATTACHED_UNFINISHED.length() + 2)
                                + "); restart the JVM to start the agent whole"
                        : "not attached: the agent loaded with this JVM failed to start (" + failed
                                + "), so nothing is limited; restart the JVM to start it";
                System.err.println("rate-limit-agent: " + why);
                System.setProperty(ATTACH_REPORT_PROPERTY, why);
                return;
            }
            if (!attached) {
                // a second -javaagent of this agent (one in JAVA_TOOL_OPTIONS and one on the command
                // line, say): its rule file is never read, so say so where the first one's errors go,
                // whatever the log level; an INFO line alone hid it
                System.err.println("rate-limit-agent: WARNING: the agent is already loaded by an earlier -javaagent;"
                        + " the options of this one are ignored (" + (optionText == null || optionText.isBlank()
                                ? "none" : optionText) + ")");
            }
            String running = RateLimitBridge.installedConfig();
            String asked = attached ? askedConfig(optionText) : null;
            if (running != null && asked != null && !sameFile(running, asked)) {
                // answering "nothing was changed" with exit 0 let a script believe the new file
                // was in force (review of attach, thirty-fourth round)
                String why = "not attached: the agent already runs in this JVM with the rule file " + running
                        + " (edits to it are reloaded); restart the JVM to use " + asked;
                AgentLog.LOG.log(Level.WARNING, "rate-limit-agent: " + why);
                System.setProperty(ATTACH_REPORT_PROPERTY, why);
                return;
            }
            AgentLog.LOG.log(Level.INFO, "rate-limit-agent: already installed in this JVM; nothing to do");
            System.setProperty(ATTACH_REPORT_PROPERTY, "already installed in this JVM; nothing was changed"
                    + (running == null ? "" : " (rule file " + running + ")"));
            return;
        }
        if (attached) {
            // the report of an earlier attach that was refused must not stand for this one
            System.clearProperty(ATTACH_REPORT_PROPERTY);
        }
        AgentOptions options = AgentOptions.parse(optionText, System.getenv("RATELIMIT_CONFIG"));
        for (String error : options.errors) {
            System.err.println("rate-limit-agent: " + error);
        }
        if (!options.errors.isEmpty()) {
            // the rule file's errors too, so that one start shows everything to mend
            printFileErrors(options.config);
        }
        if (!options.errors.isEmpty() && options.onConfigError != AgentOptions.OnConfigError.DISABLE) {
            exitOnConfigError(attached, String.join("; ", options.errors));
            return;
        }
        Path configPath = Path.of(options.config);
        RateLimitBridge.installedConfig(configPath.toAbsolutePath().toString());
        if (attached) {
            configureLogging(options.log);
            RuleSet ruleSet = load(options, configPath, true);
            if (ruleSet != null) {
                // the files as they were read, as at start-up: taken after the retransformation
                // (seconds), a token file rotated meanwhile was never read again, the revoked
                // token exempt (review of attach and reload, thirty-fourth round)
                start(instrumentation, configPath, ruleSet, null, RuleFileWatcher.baseline(configPath, ruleSet));
            }
            return;
        }
        // Two JDK services the agent needs early take ~35 ms to start on a cold JVM (the security
        // providers behind SHA-256, which hashes the internal token as the rule file is read, and
        // java.util.logging): started here, they come up on the second core while main parses
        // the rule file, instead of one after the other on main.
        Throwable[] servicesFailed = new Throwable[1];
        Thread jdkServices = new Thread(() -> {
            try {
                configureLogging(options.log);
                TokenSource.sha256(new byte[0]);
            } catch (Throwable t) {
                // reported by the start thread, which then stops the agent as premain would have
                servicesFailed[0] = t;
            }
        }, "rate-limit-agent-jdk-services");
        jdkServices.setDaemon(true);
        jdkServices.setPriority(Thread.NORM_PRIORITY);
        jdkServices.start();
        RuleSet ruleSet = load(options, configPath, false);
        if (ruleSet == null) {
            return;
        }
        // at start-up, only what must stop a bad start happens before main: the rest is built
        // while the application starts, behind the gate (see StartupGate)
        byte[] baseline = RuleFileWatcher.baseline(configPath, ruleSet);
        StartupGate gate = new StartupGate(ruleSet, AgentInstaller.class.getClassLoader());
        gate.neverWaits(jdkServices);
        gate.register(instrumentation);
        gate.startBuilding(() -> {
            try {
                awaitQuietly(jdkServices);
                if (servicesFailed[0] != null) {
                    throw new IllegalStateException("setting up logging failed", servicesFailed[0]);
                }
                start(instrumentation, configPath, ruleSet, gate, baseline);
            } catch (Throwable t) {
                if (gate.fail()) {
                    System.err.println("[rate-limit-agent] could not start; the application runs without rate limits: " + t);
                    RateLimitBridge.startFailed(String.valueOf(t));
                } else {
                    // the transformer is in force: only what came after it (JMX, hot reload) is missing
                    RateLimitBridge.agentError("finishing start-up", t,
                            "the rules are in force, but the MBeans or the watching of the rule file may be missing");
                }
            }
        });
    }

    /**
     * The rule file an attach names (absolute), or null when it names none: the {@code attach}
     * command passes {@code config=} only when it is given a file, and options without one
     * ({@code log=debug}, from another tool) ask for none either.
     */
    static String askedConfig(String optionText) {
        AgentOptions options = AgentOptions.parse(optionText, null);
        if (!options.configNamed) {
            return null; // log=debug alone asks for no file, not the default ratelimit.yaml
        }
        try {
            return Path.of(options.config).toAbsolutePath().toString();
        } catch (RuntimeException e) {
            return null; // not a path this JVM can read: the report then says nothing was changed
        }
    }

    /** Whether two absolute paths name the same rule file (the same path, or links to one file). */
    static boolean sameFile(String a, String b) {
        Path first = Path.of(a).normalize();
        Path second = Path.of(b).normalize();
        if (first.equals(second)) {
            return true;
        }
        try {
            return Files.isSameFile(first, second);
        } catch (IOException | RuntimeException e) {
            return false; // one of them is gone or unreadable: not shown to be the same file
        }
    }

    /** Waits for {@code thread} to end, so that the log level is set before the runtime logs anything. */
    private static void awaitQuietly(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Builds the runtime and the transformer: registered directly after an attach (which then
     * retransforms the loaded classes), handed to the start-up gate otherwise.
     */
    private static void start(Instrumentation instrumentation, Path configPath, RuleSet ruleSet, StartupGate gate,
            byte[] baseline) {
        boolean attached = gate == null;
        long started = System.nanoTime();
        AgentInstaller agent;
        AdviceTransformer transformer;
        try {
            agent = new AgentInstaller(instrumentation, configPath, ruleSet);
            transformer = agent.transformer();
        } catch (RuntimeException | LinkageError e) {
            if (!attached) {
                throw e;
            }
            // nothing is registered yet: refuse the attach, say why, and let a later one try
            System.err.println("[rate-limit-agent] not attached: could not start: " + e);
            System.setProperty(ATTACH_REPORT_PROPERTY, "not attached: could not start: " + e);
            RateLimitBridge.releaseInstallation();
            return;
        }
        if (attached) {
            try {
                instrumentation.addTransformer(transformer, true);
            } catch (RuntimeException | Error e) {
                // not registered: refuse the attach as above
                System.err.println("[rate-limit-agent] not attached: could not register the transformer: " + e);
                System.setProperty(ATTACH_REPORT_PROPERTY, "not attached: could not register the transformer: " + e);
                RateLimitBridge.releaseInstallation();
                return;
            }
            try {
                agent.retransformLoaded(transformer);
                agent.attachPlatformMBeanServerNow();
                agent.finishStart(ruleSet, baseline, configPath, true, started);
            } catch (RuntimeException | Error e) {
                attachUnfinished(e);
            }
            return;
        }
        // The MBeans go on the platform MBean server when someone first asks for it (the
        // transformer weaves ManagementFactory as it loads). If it was loaded unwoven (before
        // the transformer was in force), the server may exist already: attach it now.
        RateLimitBridge.onPlatformMBeanServer(server -> agent.attachPlatformMBeanServer((MBeanServer) server));
        gate.open(transformer, instrumentation);
        if (gate.managementFactoryLoadedEarly()
                || (isLoaded(instrumentation, AdviceTransformer.MANAGEMENT_FACTORY_NAME)
                        && !transformer.managementFactoryWoven())) {
            agent.attachPlatformMBeanServerNow();
        }
        try {
            transformer.warmUp();
        } catch (RuntimeException | LinkageError e) {
            // only the first class woven is slower
            AgentLog.LOG.log(Level.DEBUG, () -> "rate-limit-agent: warming up the transformer failed: " + e);
        }
        agent.finishStart(ruleSet, baseline, configPath, false, started);
    }

    /**
     * What an attach reports when it failed after its transformer was registered: it cannot be
     * taken back (classes may have been woven already), so the agent limits what it wove, and
     * says that it did not finish, rather than that the application runs without limits.
     */
    static void attachUnfinished(Throwable failure) {
        String why = ATTACHED_UNFINISHED + ": " + failure + "; methods woven from now on are limited,"
                + " but classes loaded before the attach may not all be, and the MBeans or the watching"
                + " of the rule file may be missing; restart the JVM to start the agent whole";
        System.err.println("[rate-limit-agent] " + why);
        System.setProperty(ATTACH_REPORT_PROPERTY, why);
        // a later attach must not answer "already installed" as if all were well
        RateLimitBridge.startFailed(ATTACHED_UNFINISHED + ": " + failure);
        RateLimitBridge.agentError("finishing an attach", failure, "the transformer stays in force");
    }

    private void finishStart(RuleSet ruleSet, byte[] baseline, Path configPath, boolean attached, long started) {
        reloader.watch(ruleSet, baseline);
        String summary = "rate-limit-agent " + Version.VERSION + " started"
                + (attached ? " (attached to a running JVM)" : "") + ": config " + configPath + ", store "
                + ruleSet.store().type().yamlName() + ", " + rules.describe()
                + (attached ? "; retransformed " + listener.transformed() + " loaded classes" : "")
                + " in " + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms";
        AgentLog.LOG.log(Level.INFO, summary);
        String trustEveryone = ruleSet.client().trustEveryoneWarning();
        if (trustEveryone != null) {
            AgentLog.LOG.log(Level.WARNING, "rate-limit-agent: " + trustEveryone);
        }
        System.setProperty(ATTACH_REPORT_PROPERTY, summary);
        // the rules in force now: a rule a reload adds or re-points meanwhile has a look of its own
        reportIdleRules(attached ? 0 : IDLE_RULE_REPORT_DELAY_MILLIS, rules.methodRulesNewTo(null), false);
    }

    /**
     * Logs the method rules that matched no method: at once after an attach (every class is
     * loaded), a while after start-up otherwise (classes load lazily), and a while after a
     * reload for the rules it added or re-pointed: those of {@code among} (names and patterns)
     * still in force so.
     */
    private void reportIdleRules(long delayMillis, Map<String, String> among, boolean afterReload) {
        Thread report = new Thread(() -> {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                return;
            }
            List<String> idle = rules.idleMethodRules(sites.sites(), among);
            if (!idle.isEmpty()) {
                AgentLog.LOG.log(Level.WARNING, "rate-limit-agent: these method rules have matched no method"
                        + (delayMillis == 0 ? "" : !afterReload ? " in the first " + delayMillis / 1000 + " s"
                                : " in the " + delayMillis / 1000 + " s since the reload that made them")
                        + ": " + String.join(", ", idle) + " (check the class and method names)");
            }
        }, "rate-limit-agent-idle-rules");
        report.setDaemon(true);
        report.setPriority(Thread.NORM_PRIORITY);
        report.start();
    }

    private static RuleSet load(AgentOptions options, Path configPath, boolean attached) {
        if (!options.errors.isEmpty()) {
            // on-config-error=disable, or they would have stopped the start
            System.err.println("rate-limit-agent: WARNING: the agent options are invalid; on-config-error=disable,"
                    + " so the agent runs WITHOUT the rules of " + configPath);
            AgentLog.LOG.log(Level.ERROR, "rate-limit-agent: the agent options are invalid; running without the rules"
                    + " of " + configPath + " (on-config-error=disable)");
            return RuleSet.refused(configPath.toString(), "the agent options are invalid");
        }
        try {
            return ConfigLoader.loadFile(configPath);
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                System.err.println(error.format());
            }
            if (options.onConfigError == AgentOptions.OnConfigError.DISABLE) {
                System.err.println("rate-limit-agent: WARNING: the rule file " + configPath
                        + " is invalid; on-config-error=disable, so the agent runs WITHOUT the rules of that file");
                AgentLog.LOG.log(Level.ERROR, "rate-limit-agent: the rule file " + configPath
                        + " is invalid; running without its rules (on-config-error=disable)");
                return RuleSet.refused(configPath.toString(), "the rule file is invalid (" + ConfigException.count(e.errors().size()) + ")");
            }
            exitOnConfigError(attached, e.errors().stream().map(ConfigError::format)
                    .collect(java.util.stream.Collectors.joining(System.lineSeparator(), System.lineSeparator(), "")));
            return null;
        }
    }

    /**
     * Prints the errors of the rule file at {@code config}, if it has any; loads nothing. Only a
     * report: whatever goes wrong here, the options' errors decide what happens next.
     */
    private static void printFileErrors(String config) {
        try {
            ConfigLoader.loadFile(Path.of(config));
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                System.err.println(error.format());
            }
        } catch (RuntimeException | LinkageError unreadable) {
            // an invalid path, say: the option error already printed is what stops the start
        }
    }

    private static void exitOnConfigError(boolean attached, String why) {
        if (attached) {
            // never stop a running application: refuse the attach and say why; nothing was
            // installed, so a later attach with a mended file may install the agent
            System.err.println("rate-limit-agent: not attached: the configuration is invalid");
            System.setProperty(ATTACH_REPORT_PROPERTY, "not attached: the configuration is invalid: " + why);
            RateLimitBridge.releaseInstallation();
            return;
        }
        System.err.println("rate-limit-agent: stopping the JVM (exit code " + CONFIG_ERROR_EXIT
                + ") because the configuration is invalid; add on-config-error=disable to the agent options"
                + " to start without limits instead");
        System.exit(CONFIG_ERROR_EXIT);
    }

    /**
     * The logger whose level {@code log=} sets, held here: java.util.logging keeps its loggers
     * weakly, and a collected logger would come back without the level.
     */
    private static volatile Logger agentLogger;
    /** The {@code log=} level in force, put back whenever java.util.logging is configured again. */
    private static volatile String logLevel;
    /** The handler that prints the agent's FINE lines under {@code log=debug}: one, however often it is put back. */
    private static volatile ConsoleHandler debugHandler;
    private static final java.util.concurrent.atomic.AtomicBoolean RECONFIGURATION_WATCHED =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Sets the agent's log level, and keeps it: an application that configures java.util.logging
     * again ({@code LogManager.readConfiguration}, as Spring Boot's JUL logging system and many
     * servers do) resets every logger's level and removes every handler. Without the listener,
     * {@code log=warn} and {@code log=error} fell back to INFO, and under {@code log=debug}, whose
     * logger prints through a handler of its own and not its parents', the agent logged nothing
     * at all from then on, errors and Redis outages included.
     */
    static void configureLogging(String level) {
        logLevel = level;
        applyLogLevel();
        if (RECONFIGURATION_WATCHED.compareAndSet(false, true)) {
            LogManager.getLogManager().addConfigurationListener(() -> {
                try {
                    // a configuration that names the agent's logger is the application's choice
                    if (LogManager.getLogManager().getProperty("dev.ratelimit.level") == null) {
                        applyLogLevel();
                    } else {
                        leaveToTheConfiguration();
                    }
                } catch (Throwable t) {
                    // the application's configuration goes on; the agent logs at its defaults
                }
            });
        }
    }

    /**
     * The application's configuration names the agent's logger: its level stands, and its lines go
     * where that configuration sends them. Under {@code log=debug} the agent had cut its logger off
     * from its parents' handlers, for a handler of its own that the reconfiguration removed; a
     * reconfiguration leaves {@code useParentHandlers} as it was, so the agent logged nothing at
     * all, whatever level the application gave it. Put back as the configuration says (by
     * default, its parents' handlers are used).
     */
    private static synchronized void leaveToTheConfiguration() {
        Logger logger = Logger.getLogger("dev.ratelimit");
        agentLogger = logger;
        ConsoleHandler handler = debugHandler;
        if (handler != null) {
            logger.removeHandler(handler);
        }
        String useParent = LogManager.getLogManager().getProperty("dev.ratelimit.useParentHandlers");
        // as LogManager reads a boolean property: "false" or "0" (any case), else the default
        String value = useParent == null ? "" : useParent.trim().toLowerCase(java.util.Locale.ROOT);
        logger.setUseParentHandlers(!value.equals("false") && !value.equals("0"));
    }

    private static synchronized void applyLogLevel() {
        Logger logger = Logger.getLogger("dev.ratelimit");
        agentLogger = logger;
        switch (logLevel) {
            case "error":
                logger.setLevel(java.util.logging.Level.SEVERE);
                break;
            case "warn":
                logger.setLevel(java.util.logging.Level.WARNING);
                break;
            case "debug":
                logger.setLevel(java.util.logging.Level.FINE);
                // the root handler prints INFO and above only
                ConsoleHandler handler = debugHandler;
                if (handler == null) {
                    handler = new ConsoleHandler();
                    handler.setLevel(java.util.logging.Level.FINE);
                    debugHandler = handler;
                }
                if (!java.util.Arrays.asList(logger.getHandlers()).contains(handler)) {
                    logger.addHandler(handler);
                }
                logger.setUseParentHandlers(false);
                break;
            default:
                logger.setLevel(java.util.logging.Level.INFO);
        }
    }

    /** The agent's transformer, not yet registered; the bridge is connected to the runtime. */
    private AdviceTransformer transformer() {
        LimitedMethodTransformer.RuleBookSource source = () -> rules;
        Advice.ExceptionHandler exceptionHandler = adviceExceptionHandler();
        LimitedMethodTransformer methods = new LimitedMethodTransformer(sites, source, exceptionHandler);
        RateLimitBridge.install(sites, new HttpRequests(() -> rules.http()));
        return new AdviceTransformer(methods, new ServletTransformer(exceptionHandler), source, listener, instrumentation,
                this::managementFactoryUnwoven);
    }

    /**
     * After an attach: offers the loaded classes that may need advice to the transformer, in
     * batches, pausing between them so that the application keeps running. Whether a class may
     * need it is decided as for a class being loaded, on its class file as its loader has it;
     * a class whose file cannot be found is offered anyway (the transformer sees its real bytes).
     */
    private void retransformLoaded(AdviceTransformer transformer) {
        List<Class<?>> batch = new ArrayList<>();
        for (Class<?> type : instrumentation.getAllLoadedClasses()) {
            ClassLoader loader = type.getClassLoader();
            String internalName = type.getName().replace('.', '/');
            ExceptionCopies.defined(loader, internalName);
            if (type.isArray() || type.isPrimitive() || transformer.ignored(type.getModule(), loader, internalName)
                    || !instrumentation.isModifiableClass(type)) {
                continue;
            }
            byte[] classFile = classFile(loader, internalName);
            if (classFile == null || transformer.worthALook(type.getModule(), loader, internalName, classFile)) {
                batch.add(type);
                if (batch.size() == RETRANSFORM_BATCH) {
                    retransform(batch);
                    pause();
                }
            }
        }
        retransform(batch);
    }

    private static byte[] classFile(ClassLoader loader, String internalName) {
        try (InputStream in = loader.getResourceAsStream(internalName + ".class")) {
            return in == null ? null : in.readAllBytes();
        } catch (Exception | Error e) {
            // a loader that cannot say, or fails a check of its own (an AssertionError): offer the
            // class anyway. The JVM's own errors (out of memory, a stack overflow) end the scan:
            // the attach then reports that it did not finish
            if (e instanceof VirtualMachineError) {
                throw (VirtualMachineError) e;
            }
            return null;
        }
    }

    private static void pause() {
        try {
            Thread.sleep(RETRANSFORM_PAUSE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * What suppressed advice does with an error of ours: count it and log it once, in the bridge.
     * The bridge's method is described from its class file, as the advice classes are, not by
     * reflection (Byte Buddy's reflective descriptions of methods start with building dynamic
     * proxies for the reflection API: 58 ms of the start thread's CPU in the seventh round).
     */
    static Advice.ExceptionHandler adviceExceptionHandler() {
        TypePool pool = TypePool.Default.of(ClassFileLocator.ForClassLoader.of(AgentInstaller.class.getClassLoader()));
        MethodList<MethodDescription.InDefinedShape> found = pool.describe(RateLimitBridge.class.getName()).resolve()
                .getDeclaredMethods()
                .filter(ElementMatchers.named("adviceError")
                        .and(ElementMatchers.isStatic())
                        .and(ElementMatchers.hasDescriptor("(Ljava/lang/Throwable;)V")));
        if (found.size() != 1) {
            throw new IllegalStateException("the bridge does not match the runtime: no adviceError(Throwable)");
        }
        return new Advice.ExceptionHandler.Simple(MethodInvocation.invoke(found.getOnly()));
    }

    /** Registers the MBeans on the platform MBean server, once, with the rules in force then. */
    private void attachPlatformMBeanServer(MBeanServer server) {
        if (jmx.attach(server, () -> rules.names())) {
            RateLimitBridge.onPlatformMBeanServer(null);
        }
    }

    /** Asks for the platform MBean server (building it if no one has) and registers the MBeans. */
    private void attachPlatformMBeanServerNow() {
        try {
            attachPlatformMBeanServer(ManagementFactory.getPlatformMBeanServer());
        } catch (Throwable t) {
            // metrics never stop the agent
            RateLimitBridge.agentError("building the platform MBean server", t, "the agent runs on without its MBeans");
        }
    }

    /**
     * {@code ManagementFactory} could not be woven: the agent would never hear of the platform
     * MBean server, so it builds it, on a thread of its own (the class is being loaded on this one).
     */
    private void managementFactoryUnwoven() {
        jmxThread(this::attachPlatformMBeanServerNow).start();
    }

    /**
     * The thread that builds the platform MBean server when {@code ManagementFactory} was not
     * woven. It is made on the thread that loaded that class, which may be a web application's
     * (a request thread): like the agent's other threads it takes nothing of it
     * ({@link AgentThreads#daemon}), or it pinned the application's loader while it ran. Its
     * context loader is the system class loader, as on the start thread that builds the server
     * otherwise (the agent's own loader would not see a {@code javax.management.builder.initial}
     * on the class path).
     */
    static Thread jmxThread(Runnable body) {
        Thread attach = AgentThreads.daemon("rate-limit-agent-jmx", body);
        attach.setContextClassLoader(ClassLoader.getSystemClassLoader());
        return attach;
    }

    private static boolean isLoaded(Instrumentation instrumentation, String bootstrapClassName) {
        for (Class<?> type : instrumentation.getAllLoadedClasses()) {
            if (type.getClassLoader() == null && type.getName().equals(bootstrapClassName)) {
                return true;
            }
        }
        return false;
    }

    /** An inline rule was created: give it its MBean. */
    private void ruleCreated() {
        if (rules != null) {
            jmx.sync(() -> rules.names());
        }
    }

    RuleBook rules() {
        return rules;
    }

    /**
     * Puts new rules in force: bindings of instrumented methods, the HTTP rules and the MBeans
     * follow at once; loaded classes the new rules name for the first time are retransformed.
     */
    synchronized void apply(RuleSet next) {
        RuleBook old = rules;
        LimiterFactory limiters = LimiterFactory.forReload(old.limiters(), next.store());
        RuleBook book = new RuleBook(next, limiters, old, this::ruleCreated);
        rules = book;
        sites.rebind(book);
        jmx.sync(() -> rules.names());
        if (limiters != old.limiters()) {
            old.limiters().retire();
        }
        retransformNewlyNamed(old, book);
        // a misspelled class or method name in a rule a reload adds is reported as at start-up
        Map<String, String> fresh = book.methodRulesNewTo(old);
        if (!fresh.isEmpty()) {
            reportIdleRules(IDLE_RULE_REPORT_DELAY_MILLIS, fresh, true);
        }
    }

    /**
     * Retransforms, in batches, the loaded classes whose methods the new rules name differently
     * from the old: named for the first time, or named by another pattern (a rule naming another
     * of its methods needs that method woven).
     */
    private void retransformNewlyNamed(RuleBook old, RuleBook book) {
        Set<String> needArguments = new HashSet<>();
        for (MethodSite site : sites.sites()) {
            if (book.needsArguments(site)) {
                needArguments.add(site.className);
            }
        }
        List<Class<?>> batch = new ArrayList<>();
        for (Class<?> type : instrumentation.getAllLoadedClasses()) {
            String name = type.getName();
            boolean newlyNamed = book.namesClass(name)
                    && (!old.namesClass(name) || !book.patternsNaming(name).equals(old.patternsNaming(name)));
            if ((newlyNamed || needArguments.contains(name)) && instrumentation.isModifiableClass(type)) {
                batch.add(type);
                if (batch.size() == RETRANSFORM_BATCH) {
                    retransform(batch);
                }
            }
        }
        retransform(batch);
    }

    private void retransform(List<Class<?>> batch) {
        if (batch.isEmpty()) {
            return;
        }
        Retransformation.retransform(instrumentation, batch, "for the rules");
        batch.clear();
    }

    long transformationErrors() {
        return listener.errors();
    }

    long transformedClasses() {
        return listener.transformed();
    }
}
