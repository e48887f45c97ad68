package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.store.LimiterFactory;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The transformer on its own, outside a JVM agent: which class files it weaves, that what it
 * weaves calls the bridge, and that its warm-up registers nothing. The forked-JVM tests run it
 * as the agent does.
 */
class AdviceTransformerTest {
    private MethodSites sites;
    private TransformationErrors errors;
    private AdviceTransformer transformer;

    static final class Limited {
        @RateLimited(value = "adviceTransformerTest", limit = 5, window = "1s")
        long call(long x) {
            return x + 1;
        }
    }

    static final class Plain {
        long call(long x) {
            return x + 1;
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        RuleSet ruleSet = ConfigLoader.parse("version: 1\nrules: []\n", "t.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(ruleSet, LimiterFactory.of(ruleSet.store()), null, () -> { });
        sites = new MethodSites(book);
        errors = new TransformationErrors();
        Advice.ExceptionHandler handler = AgentInstaller.adviceExceptionHandler();
        LimitedMethodTransformer.RuleBookSource source = () -> book;
        transformer = new AdviceTransformer(new LimitedMethodTransformer(sites, source, handler),
                new ServletTransformer(handler), source, errors, null, unwoven::incrementAndGet);
    }

    private final AtomicInteger unwoven = new AtomicInteger();

    /**
     * An application's loader: here the agent's classes share the system loader with the test's,
     * and the transformer never touches its own loader's classes.
     */
    private final ClassLoader application = new ClassLoader(ClassLoader.getSystemClassLoader()) { };

    private byte[] transform(Class<?> type) {
        String internalName = type.getName().replace('.', '/');
        return transformer.transform(null, application, internalName, null, null,
                ClassPrefilterTest.classFile(internalName));
    }

    @Test
    void anAnnotatedMethodIsWovenToCallTheBridge() {
        byte[] woven = transform(Limited.class);
        assertNotNull(woven);
        assertEquals(1, errors.transformed());
        assertEquals(0, errors.errors());
        assertEquals(1, sites.sites().size());
        assertTrue(callsBridge(woven, "call"), "the woven method calls RateLimitBridge");
        assertTrue(callsBridge(woven, "call", "adviceError"),
                "an error inside the advice goes to the bridge's handler, which counts it");
        assertFalse(callsBridge(ClassPrefilterTest.classFile(Limited.class.getName().replace('.', '/')), "call"));
    }

    @Test
    void classesNoRuleNamesAreLeftAlone() {
        assertNull(transform(Plain.class));
        assertNull(transform(Arrays.class), "a JDK class");
        assertNull(transformer.transform(null, null, "x/Boot", null, null, new byte[0]), "the bootstrap loader");
        assertEquals(0, errors.transformed());
        assertTrue(sites.sites().isEmpty());
    }

    @Test
    void managementFactoryIsTheOneBootstrapClassWovenAndOnlyInGetPlatformMBeanServer() {
        byte[] original = ClassPrefilterTest.classFile(AdviceTransformer.MANAGEMENT_FACTORY);
        byte[] woven = transformer.transform(null, null, AdviceTransformer.MANAGEMENT_FACTORY, null, null, original);
        assertNotNull(woven);
        assertTrue(callsBridge(woven, "getPlatformMBeanServer"), "the exit advice hands the server to the bridge");
        assertFalse(callsBridge(original, "getPlatformMBeanServer"));
        assertFalse(callsBridge(woven, "getRuntimeMXBean"), "no other method");
        assertEquals(0, errors.transformed(), "not counted as a rate-limited class");
        assertEquals(0, unwoven.get());
    }

    @Test
    void aManagementFactoryThatCannotBeWovenMakesTheAgentBuildTheServer() {
        long agentErrors = RateLimitBridge.agentErrors();
        assertNull(transformer.transform(null, null, AdviceTransformer.MANAGEMENT_FACTORY, null, null, new byte[] {1, 2}));
        assertEquals(1, unwoven.get(), "the fallback ran");
        assertEquals(agentErrors + 1, RateLimitBridge.agentErrors(), "counted as an agent error");
    }

    @Test
    void generatedAndAgentClassesAreIgnoredByName() {
        assertTrue(transformer.ignored(application, "com/example/Service$$SpringCGLIB$$0"));
        assertTrue(transformer.ignored(application, "com/example/$Proxy12"));
        assertTrue(transformer.ignored(application, "com/example/Service$ByteBuddy$abc"));
        assertTrue(transformer.ignored(application, "dev/ratelimit/shaded/net/bytebuddy/ByteBuddy"));
        assertTrue(transformer.ignored(application, "dev/ratelimit/bootstrap/RateLimitBridge"));
        assertTrue(transformer.ignored(application, "jdk/internal/Foo"));
        assertTrue(transformer.ignored(application, null));
        assertTrue(transformer.ignored(AdviceTransformer.class.getClassLoader(), "com/example/Service"), "the agent's loader");
        assertTrue(transformer.ignored(null, "com/example/Service"), "the bootstrap loader");
        assertFalse(transformer.ignored(application, "com/example/Service"));
    }

    @Test
    void theWarmUpWeavesEveryAdviceAndRegistersNothing() {
        transformer.warmUp();
        assertTrue(sites.sites().isEmpty(), "no site registered");
        assertEquals(0, errors.transformed(), "nothing counted as instrumented");
        assertEquals(0, errors.errors());
        // and a real class woven after it is as before
        assertNotNull(transform(Limited.class));
        assertEquals(1, sites.sites().size());
    }

    private static boolean callsBridge(byte[] classFile, String methodName) {
        return callsBridge(classFile, methodName, null);
    }

    /** Whether {@code methodName} calls the bridge's {@code bridgeMethod} (any of its methods if null). */
    private static boolean callsBridge(byte[] classFile, String methodName, String bridgeMethod) {
        boolean[] found = {false};
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                if (!name.equals(methodName)) {
                    return null;
                }
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitMethodInsn(int opcode, String owner, String method, String desc, boolean itf) {
                        if (owner.equals(RateLimitBridge.class.getName().replace('.', '/'))
                                && (bridgeMethod == null || bridgeMethod.equals(method))) {
                            found[0] = true;
                        }
                    }
                };
            }
        }, 0);
        return found[0];
    }
}
