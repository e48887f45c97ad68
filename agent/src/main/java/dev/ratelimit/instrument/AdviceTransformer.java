package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.ExceptionCopies;
import dev.ratelimit.bootstrap.RateLimitBridge;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.Predicate;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.TypeResolutionStrategy;
import net.bytebuddy.dynamic.VisibilityBridgeStrategy;
import net.bytebuddy.dynamic.scaffold.InstrumentedType;
import net.bytebuddy.dynamic.scaffold.MethodGraph;
import net.bytebuddy.dynamic.scaffold.TypeValidation;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.jar.asm.MethodTooLargeException;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.pool.TypePool;

/**
 * The agent's class file transformer: advice for {@code @RateLimited} methods, methods named by
 * rules, and servlet entry points, woven into the class file as it is loaded or retransformed.
 *
 * <h2>Why not {@code AgentBuilder}</h2>
 *
 * <p>Byte Buddy's {@code AgentBuilder} builds its transformer by generating and loading a
 * subclass of its own (so that it can take the {@code Module} argument on Java 5 to 8 code), and
 * on a cold JVM that took a fifth of a second and about half a second of CPU counting the JIT:
 * the largest single cost of the agent's start-up. The agent is compiled for Java 11, so this
 * class simply overrides the {@code Module} overload, and uses Byte Buddy for what it is
 * irreplaceable at: describing the class ({@link TypePool}), matching it, and weaving the
 * advice ({@code Advice}). The class file format is never changed (no added members, no type
 * initializer, advice only), and type descriptions come from the class files, looked up in the
 * class's own loader and then in the agent's jar.
 *
 * <p>The class is <em>decorated</em> ({@code ByteBuddy.decorate}, what {@code AgentBuilder}'s
 * {@code TypeStrategy.Default.DECORATE} does), not redefined: only the advice's visitors touch
 * it. A redefinition also builds the class's method graph, which reads the class file of every
 * supertype, and rewrites every method through Byte Buddy's own registry; advice needs neither.
 *
 * <h2>What it never touches</h2>
 *
 * <p>Classes of the bootstrap loader and of the agent's own loader, the JDK's packages, the
 * agent's bridge and shaded libraries, and generated classes (lambdas, proxies, CGLIB and Byte
 * Buddy classes: they have no class file to read and nothing a rule can name). Every other class
 * first goes through {@link ClassPrefilter}, which passes over nearly all of them without a parse.
 * The one exception is {@code ManagementFactory}: {@link PlatformMBeanServerAdvice} is woven into
 * its {@code getPlatformMBeanServer}, so that the agent registers its MBeans when the platform
 * MBean server comes into being instead of building it at start-up.
 *
 * <p>A class loaded while this transformer is at work on the same thread (Byte Buddy resolving a
 * type, say) is left alone, as is any class whose transformation fails: the failure is counted
 * and logged, and the class loads as it was.
 */
final class AdviceTransformer implements ClassFileTransformer {
    /** The one JDK class the agent weaves (see {@link PlatformMBeanServerAdvice}). */
    static final String MANAGEMENT_FACTORY = "java/lang/management/ManagementFactory";
    /** Written out, not computed from the above: the start-up gate reads it in premain without loading this class. */
    static final String MANAGEMENT_FACTORY_NAME = "java.lang.management.ManagementFactory";
    private static final ClassLoader PLATFORM_LOADER = ClassLoader.getPlatformClassLoader();

    private final ByteBuddy byteBuddy = new ByteBuddy()
            .with(TypeValidation.DISABLED)
            // advice only: no new members, no type initializer, the class file format unchanged
            .with(Implementation.Context.Disabled.Factory.INSTANCE)
            // Advice visits the methods a class declares, and nothing is added or overridden, so
            // neither the methods it inherits (Byte Buddy's default graph reads every supertype's
            // class file and compiles a graph of them) nor bridges to them are wanted; the
            // instrumented type is never changed either
            .with(MethodGraph.Compiler.ForDeclaredMethods.INSTANCE)
            .with(VisibilityBridgeStrategy.Default.NEVER)
            .with(InstrumentedType.Factory.Default.FROZEN);
    private final LimitedMethodTransformer methods;
    private final ElementMatcher<TypeDescription> limitedTypes;
    private final ServletTransformer servlets;
    private final ElementMatcher<TypeDescription> servletTypes = ServletTransformer.types();
    /** Whether a method rule in force names the class (a binary name); made once, used per class. */
    private final Predicate<String> namedByRules;
    private final TransformationErrors listener;
    private final Instrumentation instrumentation;
    private final ClassLoader agentLoader;
    /**
     * The agent's jar: resources of a jar appended to the bootstrap search path are invisible to
     * getResource, so a loader whose parent is the platform loader cannot find our annotation's
     * class file, and Byte Buddy drops annotations it cannot resolve.
     */
    private final ClassFileLocator agentClassFiles;
    private final Module bridgeModule = RateLimitBridge.class.getModule();
    /** Set while this thread is inside {@link #transform}: classes loaded meanwhile pass. */
    private final ThreadLocal<Boolean> busy = new ThreadLocal<>();
    private final Advice platformMBeanServerAdvice;
    private final Runnable managementFactoryUnwoven;
    private volatile boolean managementFactoryWoven;
    /** Per class loader, whether its classes see the bridge (see {@link #seesBridge}); weak, as loaders come and go. */
    private final Map<ClassLoader, Boolean> bridgeSeen = Collections.synchronizedMap(new WeakHashMap<>());

    AdviceTransformer(LimitedMethodTransformer methods, ServletTransformer servlets,
            LimitedMethodTransformer.RuleBookSource rules, TransformationErrors listener,
            Instrumentation instrumentation, Runnable managementFactoryUnwoven) {
        this.methods = methods;
        this.limitedTypes = methods.typeMatcher();
        this.servlets = servlets;
        this.namedByRules = name -> rules.current().namesClass(name);
        this.listener = listener;
        this.instrumentation = instrumentation;
        this.agentLoader = AdviceTransformer.class.getClassLoader();
        this.agentClassFiles = ClassFileLocator.ForClassLoader.of(agentLoader);
        this.platformMBeanServerAdvice = Advice.to(
                TypePool.Default.of(agentClassFiles).describe(PlatformMBeanServerAdvice.class.getName()).resolve(),
                agentClassFiles);
        this.managementFactoryUnwoven = managementFactoryUnwoven;
        // loaded now, not first inside transform (see there)
        ExceptionCopies.defined(null, null);
    }

    /**
     * Whether a class of this module, loader and name is never instrumented, whatever its bytes.
     * The JDK's classes are recognised by loader (the boot and platform loaders), by module (the
     * JDK's modules the application loader defines: {@code jdk.compiler}, {@code jdk.jdi}) and by
     * package ({@code java.}, {@code jdk.}, {@code sun.}). {@code com.sun.} is the JDK's only in
     * the JDK's modules: an application's own {@code com.sun.mail}, {@code com.sun.jersey} or
     * {@code com.sun.xml.bind} classes are limited like any other (they were never limited, with
     * no word, until the review of the thirty-eighth round). Generated classes are recognised by
     * name, as Byte Buddy's ignore matcher did. {@code module} may be null (not known).
     */
    boolean ignored(Module module, ClassLoader loader, String internalName) {
        return loader == null
                || loader == agentLoader
                || loader == PLATFORM_LOADER
                || internalName == null
                || internalName.startsWith("java/")
                || internalName.startsWith("jdk/")
                || internalName.startsWith("sun/")
                || ClassPrefilter.ofTheJdk(module)
                || internalName.startsWith("dev/ratelimit/bootstrap/")
                || internalName.startsWith("dev/ratelimit/shaded/")
                || internalName.contains("$$")
                || isJdkProxy(internalName)
                || internalName.contains("$ByteBuddy$");
    }

    /**
     * A proxy class of {@code java.lang.reflect.Proxy}: {@code $Proxy} and a number, in the package
     * of a non-public interface it implements when not in {@code jdk.proxyN}. Not any name holding
     * {@code $Proxy}: a nested class such as {@code Gateway$ProxyService} is the application's own,
     * and was once left unwoven without a word (review of the twenty-first round).
     */
    static boolean isJdkProxy(String internalName) {
        int simple = internalName.lastIndexOf('/') + 1;
        if (!internalName.startsWith("$Proxy", simple) || internalName.length() == simple + 6) {
            return false;
        }
        for (int i = simple + 6; i < internalName.length(); i++) {
            if (internalName.charAt(i) < '0' || internalName.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** Whether the class needs a parse at all (it can be instrumented and the prefilter says so). */
    boolean worthALook(Module module, ClassLoader loader, String internalName, byte[] classFile) {
        return !ignored(module, loader, internalName)
                && ClassPrefilter.worthALook(internalName, classFile, namedByRules);
    }

    @Override
    public byte[] transform(ClassLoader loader, String internalName, Class<?> redefined, ProtectionDomain domain,
            byte[] classFile) {
        return transform(null, loader, internalName, redefined, domain, classFile);
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String internalName, Class<?> redefined,
            ProtectionDomain domain, byte[] classFile) {
        if (loader == null && MANAGEMENT_FACTORY.equals(internalName)) {
            return managementFactory(module, classFile);
        }
        if (internalName == null && loader != null) {
            // defined with defineClass(null, ...): the name is in the class file
            internalName = ClassPrefilter.nameOf(classFile);
        }
        if (redefined == null && loader != null) {
            // (through the gate at start-up, told there already; after an attach, only here).
            // Never for the boot loader's classes, and ExceptionCopies is loaded when the
            // transformer is made: its first load inside transform comes through transform
            // itself, and a first version that called it for every class left classes loaded
            // after an attach intermittently not woven at all (AttachIT).
            ExceptionCopies.defined(loader, internalName);
        }
        String name = internalName;
        boolean entered = false;
        try {
            // the byte scan first: it loads no class, and most classes end there, without the
            // re-entry guard's thread-local look-up and clean-up
            if (!worthALook(module, loader, internalName, classFile) || busy.get() != null) {
                return null;
            }
            busy.set(Boolean.TRUE);
            entered = true;
            name = internalName.replace('/', '.');
            ClassFileLocator locator = new ClassFileLocator.Compound(
                    ClassFileLocator.Simple.of(name, classFile),
                    ClassFileLocator.ForClassLoader.of(loader),
                    agentClassFiles);
            TypePool pool = new TypePool.Default.WithLazyResolution(
                    TypePool.CacheProvider.Simple.withObjectType(), locator, TypePool.Default.ReaderMode.FAST);
            TypeDescription type = pool.describe(name).resolve();
            if (type.isSynthetic()) {
                return null;
            }
            if (redefined != null) {
                type = asFirstDefined(type, name, loader);
            }
            if ((ClassPrefilter.scan(classFile) & ClassPrefilter.ANNOTATION) != 0) {
                unreadableAnnotations(name, classFile, locator, redefined == null);
            }
            boolean limited = limitedTypes.matches(type);
            boolean servlet = servletTypes.matches(type);
            if (!limited && !servlet) {
                return null;
            }
            if (!seesBridge(loader)) {
                // woven, its every call would throw NoClassDefFoundError into the application
                listener.bridgeUnseen(name, loader);
                return null;
            }
            DynamicType.Builder<?> builder = byteBuddy.decorate(type, locator);
            if (limited) {
                builder = methods.transform(builder, type, loader, classFile);
            }
            if (servlet) {
                builder = servlets.transform(builder, type, loader);
            }
            DynamicType.Unloaded<?> woven = make(builder, pool, name);
            readsBridge(module);
            listener.transformed(name);
            return woven.getBytes();
        } catch (Throwable error) {
            listener.failed(name, error);
            return null;
        } finally {
            if (entered) {
                methods.endWeave();
                busy.remove();
            }
        }
    }

    /**
     * Counts and names each method annotated {@code RateLimited} whose annotation type the
     * class's loader serves no class file of (one that defines classes from bytes, an in-memory
     * plugin loader): Byte Buddy cannot read such an annotation, so the method is not limited by
     * it (only by the file's rules that name it, if any).
     * Nothing said so, in the log or the metrics (the review of the method path, thirty-sixth
     * round). Once per class, at its first definition: a retransformation sees the same file.
     * Names, too, each constructor, abstract or native method so annotated: never limited; this
     * also for a class already loaded ({@code firstDefinition} false: after an attach, where its
     * first definition was not seen; a reload's retransformation names nothing twice).
     */
    private void unreadableAnnotations(String name, byte[] classFile, ClassFileLocator locator, boolean firstDefinition) {
        List<String[]> annotated = LimitedMethodTransformer.rateLimitedAnnotations(classFile);
        Map<String, Boolean> readable = new java.util.HashMap<>(2);
        for (String[] method : annotated) {
            if (method[3] != null) {
                listener.annotationIgnored(name, method[0], method[1], method[2], method[3]);
                continue;
            }
            if (!firstDefinition) {
                continue;
            }
            boolean found = readable.computeIfAbsent(method[2], type -> {
                try {
                    return locator.locate(type).isResolved();
                } catch (java.io.IOException | RuntimeException unreadable) {
                    return false;
                }
            });
            if (!found) {
                listener.annotationUnreadable(name, method[0], method[1], method[2], methods.namedByRules(name, method[0]));
            }
        }
    }

    /**
     * Makes the woven class. A limited method whose advice takes its code past the JVM's 64 KB
     * for a method (one of about 63 KB already) is left out and the class made again, so that
     * its other limited methods keep their limits: the whole class once loaded unwoven for one
     * such method (method-rule review, thirty-second round). Any other failure, or a method that
     * is too large for another reason (a servlet's entry point), fails the class as before; the
     * methods left out on the way are reported only once the class is made, so that a class that
     * fails all the same is reported as that alone.
     */
    private DynamicType.Unloaded<?> make(DynamicType.Builder<?> builder, TypePool pool, String name) {
        List<MethodTooLargeException> leftOut = new ArrayList<>();
        while (true) {
            DynamicType.Unloaded<?> woven;
            try {
                woven = builder.make(TypeResolutionStrategy.Disabled.INSTANCE, pool);
            } catch (MethodTooLargeException tooLarge) {
                // each round takes one method out, so this ends
                if (!methods.leaveOut(tooLarge.getMethodName() + tooLarge.getDescriptor())) {
                    throw tooLarge;
                }
                leftOut.add(tooLarge);
                continue;
            }
            for (MethodTooLargeException tooLarge : leftOut) {
                listener.leftOut(name, tooLarge.getMethodName(), tooLarge.getDescriptor(), tooLarge.getCodeSize());
            }
            return woven;
        }
    }

    /**
     * Whether classes of {@code loader} resolve the bridge, which the woven advice calls, to the
     * bootstrap loader's. Loaders that delegate to their parents do; a loader that hands only the
     * JDK's own packages to the boot class path does not (JBoss Modules without
     * {@code jboss.modules.system.pkgs}, an OSGi framework without boot delegation of the
     * package, an application's own isolating loader). Woven into such a class, the advice threw
     * {@code NoClassDefFoundError} into every call, and the handler meant to catch errors of the
     * agent's threw it again, since it calls the bridge too (review of the twenty-third round).
     * Asked once per loader: the bridge is loaded already, so the question defines no class.
     */
    boolean seesBridge(ClassLoader loader) {
        Boolean known = bridgeSeen.get(loader);
        if (known != null) {
            return known;
        }
        boolean sees;
        try {
            sees = Class.forName(RateLimitBridge.class.getName(), false, loader) == RateLimitBridge.class;
        } catch (ClassNotFoundException | NoClassDefFoundError notSeen) {
            sees = false;
        } catch (RuntimeException | LinkageError unsure) {
            // a loader not ready yet, say: this class stays unwoven, and the next one asks again
            return false;
        }
        bridgeSeen.put(loader, sees);
        return sees;
    }

    /**
     * For a retransformation: the class as its loader's class file describes it, or {@code rebuilt}.
     * The JVM's rebuilt class file keeps only annotations of runtime retention, so an application's
     * own {@code RateLimited} declared without {@code @Retention} (class retention, Java's default)
     * would be lost on a class loaded before the agent could weave it (an attach, another agent's
     * premain) and its methods would run unlimited (review of the twenty-first round). The loader's
     * description is taken only when it carries a {@code RateLimited} of class retention, declares
     * the same methods, and agrees with the rebuilt one on every {@code RateLimited} of runtime
     * retention: the loader's file may be another version of the class (a child-first loader over
     * an older copy on the class path), and must never override what the loaded class itself
     * says. The weave itself still reads the rebuilt class file.
     */
    private TypeDescription asFirstDefined(TypeDescription rebuilt, String name, ClassLoader loader) {
        try {
            ClassFileLocator.Resolution original = ClassFileLocator.ForClassLoader.of(loader).locate(name);
            if (!original.isResolved()) {
                return rebuilt;
            }
            ClassFileLocator locator = new ClassFileLocator.Compound(
                    ClassFileLocator.Simple.of(name, original.resolve()),
                    ClassFileLocator.ForClassLoader.of(loader),
                    agentClassFiles);
            TypeDescription first = new TypePool.Default.WithLazyResolution(TypePool.CacheProvider.Simple.withObjectType(),
                    locator, TypePool.Default.ReaderMode.FAST).describe(name).resolve();
            return carriesClassRetention(first) && runtimeAnnotations(first).equals(runtimeAnnotations(rebuilt))
                    ? first : rebuilt;
        } catch (java.io.IOException | RuntimeException unreadable) {
            return rebuilt;
        }
    }

    /** Whether a method of {@code type} carries a RateLimited annotation of class retention. */
    private static boolean carriesClassRetention(TypeDescription type) {
        for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            AnnotationDescription annotation = LimitedMethodTransformer.rateLimited(method);
            if (annotation != null && !keptAtRuntime(annotation.getAnnotationType())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Every method {@code type} declares, with its RateLimited annotation of runtime retention (null
     * for none): two descriptions with equal maps declare the same methods and agree on those.
     */
    private static Map<MethodDescription.SignatureToken, AnnotationDescription> runtimeAnnotations(
            TypeDescription type) {
        Map<MethodDescription.SignatureToken, AnnotationDescription> kept = new java.util.HashMap<>();
        for (MethodDescription.InDefinedShape method : type.getDeclaredMethods()) {
            AnnotationDescription annotation = LimitedMethodTransformer.rateLimited(method);
            boolean runtime = annotation != null && keptAtRuntime(annotation.getAnnotationType());
            kept.put(method.asSignatureToken(), runtime ? annotation : null);
        }
        return kept;
    }

    private static boolean keptAtRuntime(TypeDescription annotationType) {
        AnnotationDescription.Loadable<java.lang.annotation.Retention> retention =
                annotationType.getDeclaredAnnotations().ofType(java.lang.annotation.Retention.class);
        return retention != null && retention.load().value() == java.lang.annotation.RetentionPolicy.RUNTIME;
    }

    /**
     * Weaves {@link PlatformMBeanServerAdvice} into {@code getPlatformMBeanServer}. If that
     * fails, the agent builds the platform MBean server itself, so that its MBeans are never lost.
     */
    private byte[] managementFactory(Module module, byte[] classFile) {
        try {
            ClassFileLocator locator = new ClassFileLocator.Compound(
                    ClassFileLocator.Simple.of(MANAGEMENT_FACTORY_NAME, classFile),
                    ClassFileLocator.ForClassLoader.ofBootLoader());
            TypePool pool = new TypePool.Default.WithLazyResolution(
                    TypePool.CacheProvider.Simple.withObjectType(), locator, TypePool.Default.ReaderMode.FAST);
            TypeDescription type = pool.describe(MANAGEMENT_FACTORY_NAME).resolve();
            byte[] woven = byteBuddy.decorate(type, locator)
                    .visit(platformMBeanServerAdvice.on(ElementMatchers.<MethodDescription>named("getPlatformMBeanServer")
                            .and(ElementMatchers.isStatic()).and(ElementMatchers.takesNoArguments())))
                    .make(TypeResolutionStrategy.Disabled.INSTANCE, pool)
                    .getBytes();
            readsBridge(module);
            managementFactoryWoven = true;
            return woven;
        } catch (Throwable error) {
            RateLimitBridge.agentError("weaving " + MANAGEMENT_FACTORY_NAME, error,
                    "the class is left as it is, and the platform MBean server is built at once");
            managementFactoryUnwoven.run();
            return null;
        }
    }

    /** Whether this transformer has woven {@code ManagementFactory} (set before the class is defined). */
    boolean managementFactoryWoven() {
        return managementFactoryWoven;
    }

    /**
     * Weaves every kind of advice into a class of the agent's own and throws the result away.
     *
     * <p>The first class woven loads and runs, interpreted, several hundred classes of Byte
     * Buddy's, and it is woven on the thread that loads it: in the Spring Boot demo, that was
     * the application's main thread, for a quarter of a second. Called on the agent's start
     * thread once the transformer is in force, this moves that cost off the application's
     * threads. It changes nothing else: no site is registered and the class is not redefined.
     *
     * @return the woven class file, for tests: the agent throws it away
     */
    byte[] warmUp() {
        String name = WarmUp.class.getName();
        TypePool pool = TypePool.Default.of(agentClassFiles);
        TypeDescription type = pool.describe(name).resolve();
        limitedTypes.matches(type);
        servletTypes.matches(type);
        DynamicType.Builder<?> builder = byteBuddy.decorate(type, agentClassFiles);
        builder = servlets.warmUp(builder, ElementMatchers.named("handle"));
        builder = methods.warmUp(builder, type);
        try {
            return builder.make(TypeResolutionStrategy.Disabled.INSTANCE, pool).getBytes();
        } finally {
            methods.endWeave();
        }
    }

    /** What {@link #warmUp()} weaves into: a servlet-like method, and methods with and without a value. */
    @SuppressWarnings("unused")
    static final class WarmUp {
        void handle(Object request, Object response) {
        }

        long call(String key, int count) {
            return key.length() + count;
        }

        void run() {
        }

        Object get() {
            return null;
        }
    }

    /** The advice calls the bridge: a class of a named module must be able to read it. */
    private void readsBridge(Module module) {
        if (module != null && module.isNamed() && !module.canRead(bridgeModule)) {
            instrumentation.redefineModule(module, Set.of(bridgeModule), Map.of(), Map.of(), Set.of(), Map.of());
        }
    }
}
