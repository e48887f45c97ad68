package dev.ratelimit.instrument;

import static net.bytebuddy.matcher.ElementMatchers.any;
import static net.bytebuddy.matcher.ElementMatchers.isBootstrapClassLoader;
import static net.bytebuddy.matcher.ElementMatchers.isSynthetic;
import static net.bytebuddy.matcher.ElementMatchers.nameContains;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;

import dev.ratelimit.Version;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.config.ConfigError;
import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.http.HttpRequests;
import dev.ratelimit.store.LimiterFactory;
import java.lang.System.Logger.Level;
import java.lang.instrument.Instrumentation;
import java.nio.file.Path;
import java.util.logging.ConsoleHandler;
import java.util.logging.Logger;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.scaffold.TypeValidation;
import net.bytebuddy.implementation.bytecode.member.MethodInvocation;

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

    private static final System.Logger LOG = System.getLogger("dev.ratelimit");
    private static volatile AgentInstaller installed;

    private final Path configPath;
    private final MethodSites sites;
    private final TransformationErrors listener = new TransformationErrors();
    private volatile RuleBook rules;

    private AgentInstaller(Path configPath, RuleBook rules) {
        this.configPath = configPath;
        this.rules = rules;
        this.sites = new MethodSites(rules);
    }

    /** Called by {@code AgentLauncher} through reflection. */
    public static synchronized void install(String optionText, Instrumentation instrumentation, boolean attached) {
        if (installed != null) {
            LOG.log(Level.INFO, "rate-limit-agent: already installed in this JVM; nothing to do");
            return;
        }
        AgentOptions options;
        try {
            options = AgentOptions.parse(optionText, System.getenv("RATELIMIT_CONFIG"));
        } catch (IllegalArgumentException e) {
            System.err.println("rate-limit-agent: " + e.getMessage());
            exitOnConfigError(attached);
            return;
        }
        configureLogging(options.log);
        Path configPath = Path.of(options.config);
        RuleSet ruleSet = load(options, configPath, attached);
        if (ruleSet == null) {
            return;
        }
        AgentInstaller agent = new AgentInstaller(configPath, new RuleBook(ruleSet, LimiterFactory.of(ruleSet.store())));
        agent.instrument(instrumentation);
        installed = agent;
        LOG.log(Level.INFO, "rate-limit-agent " + Version.VERSION + " started: config " + configPath
                + ", " + ruleSet.rules().size() + " rules, store " + ruleSet.store().type().name().toLowerCase()
                + (attached ? ", attached to a running JVM" : ""));
    }

    private static RuleSet load(AgentOptions options, Path configPath, boolean attached) {
        try {
            return ConfigLoader.load(configPath);
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                System.err.println(error.format());
            }
            if (options.onConfigError == AgentOptions.OnConfigError.DISABLE) {
                System.err.println("rate-limit-agent: WARNING: the rule file " + configPath
                        + " is invalid; on-config-error=disable, so the agent runs WITHOUT the rules of that file");
                LOG.log(Level.ERROR, "rate-limit-agent: the rule file " + configPath
                        + " is invalid; running without its rules (on-config-error=disable)");
                return RuleSet.empty(configPath.toString());
            }
            exitOnConfigError(attached);
            return null;
        }
    }

    private static void exitOnConfigError(boolean attached) {
        if (attached) {
            System.err.println("rate-limit-agent: not attached: the configuration is invalid");
            return;
        }
        System.err.println("rate-limit-agent: stopping the JVM (exit code " + CONFIG_ERROR_EXIT
                + ") because the configuration is invalid; add on-config-error=disable to the agent options"
                + " to start without limits instead");
        System.exit(CONFIG_ERROR_EXIT);
    }

    private static void configureLogging(String level) {
        Logger logger = Logger.getLogger("dev.ratelimit");
        switch (level) {
            case "error":
                logger.setLevel(java.util.logging.Level.SEVERE);
                break;
            case "warn":
                logger.setLevel(java.util.logging.Level.WARNING);
                break;
            case "debug":
                logger.setLevel(java.util.logging.Level.FINE);
                // the root handler prints INFO and above only
                ConsoleHandler handler = new ConsoleHandler();
                handler.setLevel(java.util.logging.Level.FINE);
                logger.addHandler(handler);
                logger.setUseParentHandlers(false);
                break;
            default:
                logger.setLevel(java.util.logging.Level.INFO);
        }
    }

    private void instrument(Instrumentation instrumentation) {
        if (Runtime.version().feature() >= 24) {
            // Byte Buddy's Nexus uses sun.misc.Unsafe, which warns on 24+; advice needs no Nexus
            System.setProperty("net.bytebuddy.nexus.disabled", "true");
        }
        LimitedMethodTransformer.RuleBookSource source = () -> rules;
        Advice.ExceptionHandler exceptionHandler = adviceExceptionHandler();
        LimitedMethodTransformer transformer = new LimitedMethodTransformer(sites, source, exceptionHandler);
        RateLimitBridge.install(sites, new HttpRequests(() -> rules.http()));
        new AgentBuilder.Default(new ByteBuddy().with(TypeValidation.DISABLED))
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.DescriptionStrategy.Default.POOL_ONLY)
                .with(AgentBuilder.PoolStrategy.Default.FAST)
                // Resources of a jar appended to the bootstrap search path are invisible to
                // getResource, so a loader whose parent is the platform loader cannot find our
                // annotation's class file, and Byte Buddy drops annotations it cannot resolve.
                // The agent jar holds it: look there after the class's own loader.
                .with(new AgentBuilder.LocationStrategy.Compound(
                        AgentBuilder.LocationStrategy.ForClassLoader.STRONG,
                        new AgentBuilder.LocationStrategy.Simple(
                                ClassFileLocator.ForClassLoader.of(AgentInstaller.class.getClassLoader()))))
                .with(listener)
                .with(new ClassPrefilter(source))
                .assureReadEdgeTo(instrumentation, RateLimitBridge.class)
                .ignore(any(), isBootstrapClassLoader())
                .or(nameStartsWith("dev.ratelimit.bootstrap.")
                        .or(nameStartsWith("dev.ratelimit.shaded."))
                        .or(nameStartsWith("java."))
                        .or(nameStartsWith("jdk."))
                        .or(nameStartsWith("sun."))
                        .or(nameStartsWith("com.sun."))
                        .or(nameContains("$$Lambda"))
                        .or(nameContains("$ByteBuddy$"))
                        .or(isSynthetic()))
                .or(any(), loader -> loader == AgentInstaller.class.getClassLoader())
                .type(transformer.typeMatcher())
                .transform(transformer)
                .type(ServletTransformer.types())
                .transform(new ServletTransformer(exceptionHandler))
                .installOn(instrumentation);
    }

    /** What suppressed advice does with an error of ours: count it and log it once, in the bridge. */
    private static Advice.ExceptionHandler adviceExceptionHandler() {
        try {
            return new Advice.ExceptionHandler.Simple(MethodInvocation.invoke(new MethodDescription.ForLoadedMethod(
                    RateLimitBridge.class.getMethod("adviceError", Throwable.class))));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("the bridge does not match the runtime", e);
        }
    }

    /** The installed agent, or {@code null}. */
    static AgentInstaller installed() {
        return installed;
    }

    Path configPath() {
        return configPath;
    }

    RuleBook rules() {
        return rules;
    }

    MethodSites sites() {
        return sites;
    }

    long transformationErrors() {
        return listener.errors();
    }

    long transformedClasses() {
        return listener.transformed();
    }
}
