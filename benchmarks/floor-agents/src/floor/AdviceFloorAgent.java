package floor;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.TypeResolutionStrategy;
import net.bytebuddy.dynamic.VisibilityBridgeStrategy;
import net.bytebuddy.dynamic.scaffold.InstrumentedType;
import net.bytebuddy.dynamic.scaffold.MethodGraph;
import net.bytebuddy.dynamic.scaffold.TypeValidation;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.pool.TypePool;

/**
 * The least an agent that inlines Byte Buddy advice can do, built the way ours is: a
 * retransform-capable transformer registered in {@code premain}, Byte Buddy's {@code ByteBuddy}
 * and {@code Advice} built on a thread of its own while the application starts, and one class
 * woven by {@code decorate}, looking at declared methods only, as it loads:
 * {@code jakarta.servlet.http.HttpServlet}, recognised by its name alone (no look at any other
 * class's bytes), with one enter advice on
 * {@code service(ServletRequest, ServletResponse)}. If that class loads before the advice is
 * built, it waits for it. No rule file, no limiter, no isolation, no warm-up. The advice says
 * once, on standard output, that it ran.
 *
 * <p>Until the seventh round this agent built {@code ByteBuddy} in {@code premain}, on
 * {@code main}, with Byte Buddy's default method graph (every inherited method, read from every
 * supertype's class file); the sixth round's figures are of that version.
 */
public final class AdviceFloorAgent {
    private static final String TARGET = "jakarta/servlet/http/HttpServlet";

    private AdviceFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) {
        weave(instrumentation, ServiceAdvice.class.getName());
    }

    /** Weaves the advice class named {@code adviceClass} (of this agent's jar) into {@code HttpServlet.service}. */
    static void weave(Instrumentation instrumentation, String adviceClass) {
        Weaver weaver = new Weaver(adviceClass);
        instrumentation.addTransformer(weaver, true);
        Thread build = new Thread(weaver::build, "advice-floor-start");
        build.setDaemon(true);
        build.start();
    }

    private static final class Weaver implements ClassFileTransformer {
        private final CountDownLatch ready = new CountDownLatch(1);
        private final String adviceClass;
        // both built on the agent's own thread: premain does no Byte Buddy work
        private volatile Advice advice;
        private volatile ByteBuddy byteBuddy;

        Weaver(String adviceClass) {
            this.adviceClass = adviceClass;
        }

        void build() {
            byteBuddy = new ByteBuddy()
                    .with(TypeValidation.DISABLED)
                    .with(Implementation.Context.Disabled.Factory.INSTANCE)
                    .with(MethodGraph.Compiler.ForDeclaredMethods.INSTANCE)
                    .with(VisibilityBridgeStrategy.Default.NEVER)
                    .with(InstrumentedType.Factory.Default.FROZEN);
            ClassFileLocator ours = ClassFileLocator.ForClassLoader.of(AdviceFloorAgent.class.getClassLoader());
            advice = Advice.to(TypePool.Default.of(ours).describe(adviceClass).resolve(), ours);
            ready.countDown();
        }

        @Override
        public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
                ProtectionDomain domain, byte[] classFile) {
            if (loader == null || !TARGET.equals(name)) {
                return null;
            }
            try {
                if (!ready.await(10, TimeUnit.SECONDS)) {
                    return null;
                }
                String binaryName = name.replace('/', '.');
                ClassFileLocator locator = new ClassFileLocator.Compound(
                        ClassFileLocator.Simple.of(binaryName, classFile), ClassFileLocator.ForClassLoader.of(loader));
                TypePool pool = new TypePool.Default.WithLazyResolution(TypePool.CacheProvider.Simple.withObjectType(),
                        locator, TypePool.Default.ReaderMode.FAST);
                TypeDescription type = pool.describe(binaryName).resolve();
                return byteBuddy.decorate(type, locator)
                        .visit(advice.on(named("service").and(takesArguments(2))
                                .and(takesArgument(0, named("jakarta.servlet.ServletRequest")))))
                        .make(TypeResolutionStrategy.Disabled.INSTANCE, pool)
                        .getBytes();
            } catch (Throwable t) {
                System.err.println("advice floor agent: could not weave " + name + ": " + t);
                return null;
            }
        }
    }

    /** Inlined into {@code HttpServlet}: JDK types only. */
    public static final class ServiceAdvice {
        private ServiceAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) Object request) {
            if (request != null && System.getProperties().putIfAbsent("floor.advice.ran", "true") == null) {
                System.out.println("advice floor agent: advice ran");
            }
        }
    }
}
