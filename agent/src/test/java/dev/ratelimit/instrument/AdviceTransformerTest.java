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
import dev.ratelimit.testing.LargeMethodClass;
import dev.ratelimit.testing.LogCapture;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
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

    /** One method for each of the four advices, and one left alone. */
    static final class Mixed {
        @RateLimited(limit = 5, window = "1s")
        long value(long x) {
            return x + 1;
        }

        @RateLimited(limit = 5, window = "1s")
        void nothing() {
        }

        @RateLimited(limit = 5, window = "1s", key = "arg0")
        boolean keyed(String user) {
            return user.isEmpty();
        }

        @RateLimited(limit = 5, window = "1s", key = "arg0")
        void keyedVoid(String user) {
        }

        long plain(long x) {
            return x;
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

    /** An annotated method of an anonymous class, which has no simple name. */
    static final Object ANONYMOUS = new Object() {
        @dev.ratelimit.annotation.RateLimited(limit = 1, window = "1h")
        String get() {
            return "x";
        }
    };

    /**
     * An anonymous class's methods get default rule names from its binary name after the package
     * ({@code AdviceTransformerTest$1#get}): its simple name is empty, and "#get" was refused as a
     * rule name, so its inline rule was never made and the method was not limited.
     */
    @Test
    void anAnonymousClassGetsAUsableDefaultRuleName() {
        assertNotNull(transform(ANONYMOUS.getClass()));
        assertEquals(1, sites.sites().size());
        MethodSite site = sites.sites().get(0);
        assertEquals(ANONYMOUS.getClass().getName().substring(ANONYMOUS.getClass().getName().lastIndexOf('.') + 1)
                + "#get", site.defaultRuleName);
        assertEquals(1, sites.rulesOf(site.id).length, "its inline rule is made and bound");
    }

    /**
     * A class file whose method is annotated with an application's own {@code RateLimited} of a
     * type the loader serves no class file of (an in-memory plugin loader): Byte Buddy cannot read
     * the annotation and the method is not limited. That is now counted and said, naming the
     * method; nothing said it (the review of the method path, thirty-sixth round). An own
     * annotation the loader serves is read, and nothing is said.
     */
    @Test
    void anAnnotationWhoseTypeTheLoaderCannotServeIsCountedAndNamed() {
        try (LogCapture capture = LogCapture.open()) {
            assertNull(transformer.transform(null, application, "example/Plugin", null, null,
                    annotatedClass("example/Plugin", "Lexample/RateLimited;", 1)), "nothing it can weave");
            assertEquals(1, errors.errors(), "counted");
            List<String> warnings = capture.messages(java.util.logging.Level.WARNING);
            assertEquals(1, warnings.size(), warnings::toString);
            assertTrue(warnings.get(0).startsWith("rate-limit-agent: example.Plugin#work()V is annotated example.RateLimited,"
                    + " but its class loader serves no class file of that type"), warnings.get(0));

            assertNotNull(transformer.transform(null, application, "example/OwnPlugin", null, null,
                    annotatedClass("example/OwnPlugin", "Ldev/ratelimit/fixture/own/RateLimited;", 1)));
            assertNotNull(transformer.transform(null, application, "example/OurPlugin", null, null,
                    annotatedClass("example/OurPlugin", "Ldev/ratelimit/annotation/RateLimited;", 1L)));
            assertEquals(1, errors.errors(), "annotations whose types are served: nothing more counted");
            assertEquals(1, capture.messages(java.util.logging.Level.WARNING).size());
        }
    }

    /**
     * The warning says what still limits a method a file rule names, and says nothing of a
     * method never limited, annotation or not (an abstract one): it told the user to name a
     * method in the rule file that a rule named already, and that it ran without limits (the
     * review of the thirty-sixth round's commits).
     */
    @Test
    void theWarningForAnUnreadableAnnotationSaysWhatStillLimitsTheMethod() throws Exception {
        RuleSet ruleSet = ConfigLoader.parse("version: 1\nrules:\n  - name: named\n    match: {method: example.Named#work}\n"
                + "    key: global\n    limit: 3\n    window: 1h\n", "t.yaml", Path.of("."), name -> null);
        RuleBook book = new RuleBook(ruleSet, LimiterFactory.of(ruleSet.store()), null, () -> { });
        Advice.ExceptionHandler handler = AgentInstaller.adviceExceptionHandler();
        LimitedMethodTransformer.RuleBookSource source = () -> book;
        TransformationErrors counted = new TransformationErrors();
        AdviceTransformer withRule = new AdviceTransformer(new LimitedMethodTransformer(new MethodSites(book), source, handler),
                new ServletTransformer(handler), source, counted, null, () -> { });
        try (LogCapture capture = LogCapture.open()) {
            assertNotNull(withRule.transform(null, application, "example/Named", null, null,
                    annotatedClass("example/Named", "Lexample/RateLimited;", 1)), "woven for the rule");
            List<String> warnings = capture.messages(java.util.logging.Level.WARNING);
            assertEquals(1, warnings.size(), warnings::toString);
            assertTrue(warnings.get(0).contains("so the annotation cannot be read and its limit is not applied (the rule"
                    + " file's rules that name the method are), or annotate it with dev.ratelimit.annotation.RateLimited"),
                    warnings.get(0));
            assertEquals(1, counted.errors());

            net.bytebuddy.jar.asm.ClassWriter writer = new net.bytebuddy.jar.asm.ClassWriter(0);
            writer.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_ABSTRACT | Opcodes.ACC_INTERFACE,
                    "example/Api", null, "java/lang/Object", null);
            MethodVisitor work = writer.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_ABSTRACT, "work", "()V", null, null);
            work.visitAnnotation("Lexample/RateLimited;", true).visitEnd();
            work.visitEnd();
            writer.visitEnd();
            assertNull(withRule.transform(null, application, "example/Api", null, null, writer.toByteArray()));
            // an abstract method is never limited: it is named as that, not as unreadable, and not counted
            warnings = capture.messages(java.util.logging.Level.WARNING);
            assertEquals(2, warnings.size(), warnings::toString);
            assertEquals("rate-limit-agent: example.Api#work()V is annotated example.RateLimited, but it is an abstract"
                    + " method, which is never limited: annotate the implementations, or name them in the rule file",
                    warnings.get(1));
            assertEquals(1, counted.errors());
        }
    }

    /** A class with one method, {@code work()}, annotated with the given annotation type. */
    private static byte[] annotatedClass(String internalName, String annotation, Object limit) {
        net.bytebuddy.jar.asm.ClassWriter writer = new net.bytebuddy.jar.asm.ClassWriter(
                net.bytebuddy.jar.asm.ClassWriter.COMPUTE_MAXS);
        writer.visit(Opcodes.V11, Opcodes.ACC_PUBLIC, internalName, null, "java/lang/Object", null);
        MethodVisitor work = writer.visitMethod(Opcodes.ACC_PUBLIC, "work", "()V", null, null);
        net.bytebuddy.jar.asm.AnnotationVisitor values = work.visitAnnotation(annotation, true);
        values.visit("limit", limit);
        values.visit("window", "1h");
        values.visitEnd();
        work.visitCode();
        work.visitInsn(Opcodes.RETURN);
        work.visitMaxs(0, 1);
        work.visitEnd();
        writer.visitEnd();
        return writer.toByteArray();
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
        assertTrue(transformer.ignored(null, application, "com/example/Service$$SpringCGLIB$$0"));
        assertTrue(transformer.ignored(null, application, "com/example/$Proxy12"));
        assertTrue(transformer.ignored(null, application, "com/example/Service$ByteBuddy$abc"));
        assertTrue(transformer.ignored(null, application, "dev/ratelimit/shaded/net/bytebuddy/ByteBuddy"));
        assertTrue(transformer.ignored(null, application, "dev/ratelimit/bootstrap/RateLimitBridge"));
        assertTrue(transformer.ignored(null, application, "jdk/internal/Foo"));
        assertTrue(transformer.ignored(null, application, null));
        assertTrue(transformer.ignored(null, AdviceTransformer.class.getClassLoader(), "com/example/Service"), "the agent's loader");
        assertTrue(transformer.ignored(null, null, "com/example/Service"), "the bootstrap loader");
        assertFalse(transformer.ignored(null, application, "com/example/Service"));
        // the application's own classes whose names only contain $Proxy are woven
        assertFalse(transformer.ignored(null, application, "com/example/Gateway$ProxyService"));
        assertFalse(transformer.ignored(null, application, "com/example/Outer$ProxyClient"));
        assertFalse(transformer.ignored(null, application, "com/example/$ProxyFactory"));
        assertFalse(transformer.ignored(null, application, "com/example/$Proxy"));
        assertTrue(transformer.ignored(null, application, "$Proxy3"), "a proxy in the unnamed package");
    }

    /**
     * {@code com.sun.} is the JDK's in the JDK's modules only: the application loader defines
     * {@code jdk.compiler}'s classes, and an application's own {@code com.sun.mail} classes.
     */
    @Test
    void comSunIsTheJdksOnlyInTheJdksModules() throws ClassNotFoundException {
        Module compiler = Class.forName("com.sun.tools.javac.Main").getModule();
        assertEquals(ClassLoader.getSystemClassLoader(), Class.forName("com.sun.tools.javac.Main").getClassLoader());
        assertTrue(transformer.ignored(compiler, application, "com/sun/tools/javac/Main"));
        Module unnamed = application.getUnnamedModule();
        assertFalse(transformer.ignored(unnamed, application, "com/sun/mail/smtp/SMTPTransport"));
        assertFalse(transformer.ignored(null, application, "com/sun/jersey/api/client/Client"));
        assertTrue(transformer.ignored(null, ClassLoader.getPlatformClassLoader(), "com/sun/net/httpserver/HttpServer"),
                "the platform loader's");
        assertTrue(transformer.ignored(unnamed, application, "sun/misc/Foo"));
    }

    @Test
    void theWarmUpWeavesEveryAdviceAndRegistersNothing() {
        byte[] woven = transformer.warmUp();
        assertTrue(callsBridge(woven, "handle", "enterRequest"), "the servlet advice");
        for (String method : new String[] {"call", "run", "get"}) {
            assertTrue(callsBridge(woven, method, "enterMethod"), "the method advice in " + method);
        }
        assertTrue(passesArguments(woven, "call") || passesArguments(woven, "run") || passesArguments(woven, "get"),
                "the advice that passes the arguments is among them");
        assertTrue(sites.sites().isEmpty(), "no site registered");
        assertEquals(0, errors.transformed(), "nothing counted as instrumented");
        assertEquals(0, errors.errors());
        // and a real class woven after it is as before
        assertNotNull(transform(Limited.class));
        assertEquals(1, sites.sites().size());
    }

    @Test
    void eachMethodOfAClassPassesItsOwnSiteAndReturnKind() {
        // sites 0-99 taken, so that this class's site ids are pushed with BIPUSH and no other
        // constant of the woven code can pass for one
        for (int i = 0; i < 100; i++) {
            sites.register(application, "example.Other", "m" + i, "()V", "Other", 0, false, false, null);
        }
        byte[] woven = transform(Mixed.class);
        assertNotNull(woven);
        assertEquals(0, errors.errors());
        Map<String, Integer> ids = new HashMap<>();
        for (MethodSite site : sites.sites()) {
            if (site.className.equals(Mixed.class.getName())) {
                ids.put(site.methodName, site.id);
            }
        }
        assertEquals(Set.of("value", "nothing", "keyed", "keyedVoid"), ids.keySet());
        assertEquals(4, new TreeSet<>(ids.values()).size(), "four sites: " + ids);
        for (Map.Entry<String, Integer> method : ids.entrySet()) {
            assertEquals(List.of(method.getValue()), siteConstants(woven, method.getKey()), method.getKey());
            assertTrue(callsBridge(woven, method.getKey(), "enterMethod"), method.getKey());
        }
        assertEquals(List.of(), siteConstants(woven, "plain"));
        assertFalse(callsBridge(woven, "plain"));
        assertEquals(List.of(RateLimitBridge.RETURNS_LONG), returnKinds(woven, "value"));
        assertEquals(List.of(RateLimitBridge.RETURNS_BOOLEAN), returnKinds(woven, "keyed"));
        assertEquals(List.of(), returnKinds(woven, "nothing"), "a void method has no value to default");
        assertTrue(passesArguments(woven, "keyed"));
        assertTrue(passesArguments(woven, "keyedVoid"));
        assertFalse(passesArguments(woven, "value"));
        assertFalse(passesArguments(woven, "nothing"));
    }

    /**
     * A limited method of about 64 KB, which the advice would take past the JVM's limit, is left
     * as it is, and the class's other limited method is woven: the whole class once loaded
     * unwoven (method-rule review, thirty-second round). The woven class still loads.
     */
    @Test
    void aMethodTooLargeForTheAdviceIsLeftOutAndTheRestOfItsClassWoven() throws Exception {
        byte[] original = LargeMethodClass.of("example/Big", 65_500);
        byte[] woven;
        try (LogCapture capture = LogCapture.open()) {
            woven = transformer.transform(null, application, "example/Big", null, null, original);
            List<String> severe = capture.messages(java.util.logging.Level.SEVERE);
            assertEquals(1, severe.size(), severe::toString);
            assertTrue(severe.get(0).matches("rate-limit-agent: could not limit example\\.Big#big\\(\\)V: with the advice its"
                    + " code would be 655[4-9][0-9] bytes, past the JVM's limit of 65535 for a method, so it runs without"
                    + " limits; the class's other limited methods keep theirs"), severe.get(0));
        }
        assertNotNull(woven, "the class is woven");
        assertTrue(callsBridge(woven, "small"), "the small method keeps its limit");
        assertFalse(callsBridge(woven, "big"), "the large method is left as it was");
        assertEquals(1, errors.transformed());
        assertEquals(1, errors.errors(), "the method left out is counted");
        ClassLoader loader = new ClassLoader(application) {
            @Override
            protected Class<?> findClass(String name) throws ClassNotFoundException {
                if (!name.equals("example.Big")) {
                    throw new ClassNotFoundException(name);
                }
                return defineClass(name, woven, 0, woven.length);
            }
        };
        assertEquals("example.Big", Class.forName("example.Big", true, loader).getName(), "the woven class verifies");

        // a large method that stays under the limit with the advice is woven as any other
        byte[] fits = transformer.transform(null, application, "example/Fits", null, null,
                LargeMethodClass.of("example/Fits", 60_000));
        assertTrue(callsBridge(fits, "big"));
        assertTrue(callsBridge(fits, "small"));
        assertEquals(1, errors.errors(), "nothing more counted");
    }

    /**
     * A limited servlet entry point too large for the advice: leaving its limit out does not make
     * the class fit (the servlet advice alone is too much), so the class fails, and is reported as
     * that alone, at SEVERE, counted once, even after another class had a method left out. It was
     * counted twice, with a false "could not limit ... the class's other limited methods keep
     * theirs" at SEVERE and the class's own failure at debug (review of the change).
     */
    @Test
    void aClassThatFailsAllTheSameIsReportedAsThatAloneEvenAfterAMethodWasLeftOut() {
        try (LogCapture capture = LogCapture.open()) {
            assertNotNull(transformer.transform(null, application, "example/Big", null, null,
                    LargeMethodClass.of("example/Big", 65_500)));
            assertEquals(1, errors.errors());
            assertNull(transformer.transform(null, application, "example/BigServlet", null, null,
                    LargeMethodClass.servlet("example/BigServlet", 65_500)), "the class fails");
            assertEquals(2, errors.errors(), "counted once");
            List<String> severe = capture.messages(java.util.logging.Level.SEVERE);
            assertEquals(2, severe.size(), severe::toString);
            assertTrue(severe.get(0).startsWith("rate-limit-agent: could not limit example.Big#big()V"), severe.get(0));
            assertTrue(severe.get(1).startsWith("rate-limit-agent: could not instrument example.BigServlet; it runs"
                    + " without limits"), severe.get(1));
        }
    }

    /** The int constants of 100 and above that {@code methodName} pushes: the site ids. */
    private static List<Integer> siteConstants(byte[] classFile, String methodName) {
        List<Integer> found = new ArrayList<>();
        visit(classFile, methodName, new MethodVisitor(Opcodes.ASM9) {
            @Override
            public void visitIntInsn(int opcode, int operand) {
                if ((opcode == Opcodes.BIPUSH || opcode == Opcodes.SIPUSH) && operand >= 100) {
                    found.add(operand);
                }
            }
        });
        return found;
    }

    /** The constant pushed just before each call of the bridge's {@code defaultValue}. */
    private static List<Integer> returnKinds(byte[] classFile, String methodName) {
        List<Integer> found = new ArrayList<>();
        Integer[] last = {null};
        visit(classFile, methodName, new MethodVisitor(Opcodes.ASM9) {
            @Override
            public void visitInsn(int opcode) {
                last[0] = opcode >= Opcodes.ICONST_M1 && opcode <= Opcodes.ICONST_5 ? opcode - Opcodes.ICONST_0 : null;
            }

            @Override
            public void visitIntInsn(int opcode, int operand) {
                last[0] = opcode == Opcodes.NEWARRAY ? null : operand;
            }

            @Override
            public void visitVarInsn(int opcode, int var) {
                last[0] = null;
            }

            @Override
            public void visitMethodInsn(int opcode, String owner, String method, String desc, boolean itf) {
                if (method.equals("defaultValue") && owner.equals(RateLimitBridge.class.getName().replace('.', '/'))) {
                    found.add(last[0]);
                }
                last[0] = null;
            }
        });
        return found;
    }

    /** Whether {@code methodName} builds an array of its arguments (the enter advice that passes them). */
    private static boolean passesArguments(byte[] classFile, String methodName) {
        boolean[] found = {false};
        visit(classFile, methodName, new MethodVisitor(Opcodes.ASM9) {
            @Override
            public void visitTypeInsn(int opcode, String type) {
                found[0] |= opcode == Opcodes.ANEWARRAY && type.equals("java/lang/Object");
            }
        });
        return found[0];
    }

    private static void visit(byte[] classFile, String methodName, MethodVisitor visitor) {
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                return name.equals(methodName) ? visitor : null;
            }
        }, 0);
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

    /**
     * Whether a loader sees the bridge is remembered only when the loader answered: a loader that
     * failed oddly once (not ready yet) is asked again, rather than leave its classes unwoven for
     * good (review of the twenty-third round); one that cannot find the bridge is remembered.
     */
    @Test
    void aLoaderThatFailsOddlyIsAskedAgainAndOneThatCannotSeeTheBridgeIsNot() {
        int[] asked = {0};
        ClassLoader flaky = new ClassLoader(getClass().getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (asked[0]++ == 0) {
                    throw new IllegalStateException("not ready");
                }
                return super.loadClass(name, resolve);
            }
        };
        assertFalse(transformer.seesBridge(flaky));
        assertTrue(transformer.seesBridge(flaky));
        assertTrue(transformer.seesBridge(flaky));
        assertEquals(2, asked[0], "asked until it answered, then remembered");

        int[] walledAsked = {0};
        ClassLoader walled = new ClassLoader(null) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                walledAsked[0]++;
                if (name.startsWith("java.")) {
                    return super.loadClass(name, resolve);
                }
                throw new ClassNotFoundException(name);
            }
        };
        assertFalse(transformer.seesBridge(walled));
        assertFalse(transformer.seesBridge(walled));
        assertEquals(1, walledAsked[0]);
    }
}
