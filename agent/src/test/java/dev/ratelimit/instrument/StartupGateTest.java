package dev.ratelimit.instrument;

import static dev.ratelimit.instrument.ClassPrefilterTest.classFile;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleSet;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.security.ProtectionDomain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The start-up gate: which class loads wait for the transformer, and that none escapes it. */
class StartupGateTest {
    private static final byte[] TRANSFORMED = {1, 2, 3};
    private static final long NEVER_MILLIS = 120_000;
    private static final ClassLoader APP = StartupGateTest.class.getClassLoader();
    private static final ClassLoader AGENT = new ClassLoader(null) { };
    private static final byte[] SERVLET = classFile("jakarta/servlet/http/HttpServlet");
    private static final byte[] PLAIN = classFile("java/util/ArrayList");

    private final ExecutorService loaders = Executors.newCachedThreadPool();
    private final AtomicInteger transformed = new AtomicInteger();
    private final ClassFileTransformer transformer = new ClassFileTransformer() {
        @Override
        public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
                ProtectionDomain domain, byte[] classFile) {
            transformed.incrementAndGet();
            return TRANSFORMED;
        }
    };

    @AfterEach
    void stop() {
        loaders.shutdownNow();
    }

    static RuleSet rules(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "rules.yaml", Path.of("."), name -> null);
    }

    static RuleSet noRules() throws ConfigException {
        return rules("version: 1\nrules: []\n");
    }

    private Future<byte[]> load(StartupGate gate, ClassLoader loader, String name, byte[] classFile) {
        return loaders.submit(() -> gate.transform((Module) null, loader, name, null, null, classFile));
    }

    @Test
    void aClassThatCannotNeedAdviceNeverWaits() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> assertNull(gate.transform((Module) null, APP, "java/util/ArrayList", null, null, PLAIN)));
        assertEquals(0, transformed.get());
    }

    @Test
    void aServletClassWaitsForTheTransformerAndThenGoesThroughIt() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        Future<byte[]> loading = load(gate, APP, "jakarta/servlet/http/HttpServlet", SERVLET);
        assertWaiting(loading);
        gate.open(transformer, null);
        assertArrayEquals(TRANSFORMED, loading.get(10, TimeUnit.SECONDS));
        assertEquals(1, transformed.get());
    }

    @Test
    void aClassAMethodRuleNamesWaitsToo() throws Exception {
        StartupGate gate = new StartupGate(rules("version: 1\nrules:\n  - name: list\n    match:\n"
                + "      method: java.util.ArrayList#add\n    key: global\n    limit: 5\n    window: 1s\n"), AGENT, NEVER_MILLIS);
        Future<byte[]> named = load(gate, APP, "java/util/ArrayList", PLAIN);
        assertNull(load(gate, APP, "java/util/LinkedList", PLAIN).get(10, TimeUnit.SECONDS));
        assertWaiting(named);
        gate.open(transformer, null);
        assertArrayEquals(TRANSFORMED, named.get(10, TimeUnit.SECONDS));
    }

    @Test
    void onceOpenEveryApplicationClassGoesToTheTransformerAndNoJdkOrAgentClassDoes() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        gate.open(transformer, null);
        assertArrayEquals(TRANSFORMED, gate.transform((Module) null, APP, "java/util/ArrayList", null, null, PLAIN));
        assertNull(gate.transform((Module) null, null, "jakarta/servlet/http/HttpServlet", null, null, SERVLET));
        assertNull(gate.transform((Module) null, AGENT, "jakarta/servlet/http/HttpServlet", null, null, SERVLET));
        assertEquals(1, transformed.get());
    }

    @Test
    void managementFactoryNeverWaitsAndIsMarkedWhenItLoadsBeforeTheTransformer() throws Exception {
        byte[] managementFactory = classFile(AdviceTransformer.MANAGEMENT_FACTORY);
        StartupGate early = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertNull(early.transform((Module) null, null,
                AdviceTransformer.MANAGEMENT_FACTORY, null, null, managementFactory)));
        early.open(transformer, null);
        assertTrue(early.managementFactoryLoadedEarly(), "loaded unwoven: the agent must build the server itself");
        assertEquals(0, transformed.get());

        StartupGate late = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        late.open(transformer, null);
        assertArrayEquals(TRANSFORMED, late.transform((Module) null, null, AdviceTransformer.MANAGEMENT_FACTORY,
                null, null, managementFactory), "the one bootstrap class the transformer sees");
        assertFalse(late.managementFactoryLoadedEarly());
        assertEquals(1, transformed.get());
    }

    @Test
    void managementFactoryLoadedBeforeTheGateIsMarked() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        gate.rememberLoaded(new Class<?>[] {String.class});
        assertFalse(gate.managementFactoryLoadedEarly());
        gate.rememberLoaded(new Class<?>[] {java.lang.management.ManagementFactory.class});
        assertTrue(gate.managementFactoryLoadedEarly());
    }

    @Test
    void theThreadBuildingTheTransformerNeverWaitsOnItAndWhatItLoadsIsRetransformed() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        Class<?> servlet = Class.forName("jakarta.servlet.http.HttpServlet");
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        gate.startBuilding(() -> {
            try {
                result.complete(gate.transform((Module) null, servlet.getClassLoader(), "jakarta/servlet/http/HttpServlet",
                        null, null, SERVLET));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        assertNull(result.get(10, TimeUnit.SECONDS));
        assertFalse(gate.isSettled());
        List<Class<?>> retransformed = new ArrayList<>();
        gate.open(transformer, instrumentation(retransformed, String.class, servlet));
        assertEquals(List.of(servlet), retransformed);
    }

    @Test
    void applicationClassesLoadedBeforeTheGateAreOfferedToTheTransformer() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        Class<?> servlet = Class.forName("jakarta.servlet.http.HttpServlet");
        // a JDK class of the boot loader and one of the application loader, an application class
        gate.rememberLoaded(new Class<?>[] {String.class, Class.forName("sun.launcher.LauncherHelper"), servlet,
                StartupGateTest.class});
        List<Class<?>> retransformed = new ArrayList<>();
        gate.open(transformer, instrumentation(retransformed));
        assertEquals(List.of(servlet, StartupGateTest.class), retransformed);
    }

    /**
     * A class loaded by another thread while the gate is being registered must be in the snapshot
     * of loaded classes or go through the gate. The snapshot was once taken before the gate was
     * registered, so a class loaded between the two was in neither and stayed without advice.
     */
    @Test
    void aClassLoadedWhileTheGateIsRegisteredIsNotLost() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        Class<?> servlet = Class.forName("jakarta.servlet.http.HttpServlet");
        boolean[] registered = new boolean[1];
        List<Class<?>> retransformed = new ArrayList<>();
        // the servlet class is defined while the gate is registered: a snapshot taken before the
        // registration does not hold it
        Instrumentation instrumentation = instrumentation(transformer -> {
            assertSame(gate, transformer);
            registered[0] = true;
        }, () -> registered[0] ? new Class<?>[] {servlet} : new Class<?>[0], retransformed::addAll);
        gate.register(instrumentation);
        assertTrue(registered[0]);
        gate.open(transformer, instrumentation);
        assertEquals(List.of(servlet), retransformed);
    }

    /**
     * The JVM retransforms a batch all or nothing. A class it refuses (another agent changed its
     * shape) once left every other class loaded before the gate as it was, servlets included:
     * they ran without limits. The others are now retransformed one by one.
     */
    @Test
    void aClassTheJvmRefusesToRetransformLeavesTheOthersRetransformed() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        Class<?> servlet = Class.forName("jakarta.servlet.http.HttpServlet");
        gate.rememberLoaded(new Class<?>[] {StartupGateTest.class, servlet});
        List<Class<?>> retransformed = new ArrayList<>();
        Instrumentation instrumentation = instrumentation(null, () -> new Class<?>[0], batch -> {
            if (batch.contains(StartupGateTest.class)) {
                throw new UnsupportedOperationException("class redefinition failed: attempted to change the schema"
                        + " (add/remove fields)");
            }
            retransformed.addAll(batch);
        });
        gate.open(transformer, instrumentation);
        assertEquals(List.of(servlet), retransformed);
    }

    @Test
    void aLateFailureLeavesTheTransformerInForce() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        gate.open(transformer, null);
        assertFalse(gate.fail(), "already open: nothing to undo");
        assertArrayEquals(TRANSFORMED, gate.transform((Module) null, APP, "jakarta/servlet/http/HttpServlet", null,
                null, SERVLET));
    }

    /** An instrumentation whose loaded classes are {@code loaded}, recording what is retransformed. */
    private static Instrumentation instrumentation(List<Class<?>> retransformed, Class<?>... loaded) {
        return instrumentation(null, () -> loaded, retransformed::addAll);
    }

    /**
     * An instrumentation that tells {@code registered} of each transformer added (none may be, if
     * null), whose loaded classes {@code loaded} gives, and which hands each batch to retransform
     * to {@code retransform} (which may throw as the JVM does).
     */
    private static Instrumentation instrumentation(Consumer<Object> registered, Supplier<Class<?>[]> loaded,
            Consumer<List<Class<?>>> retransform) {
        return (Instrumentation) Proxy.newProxyInstance(APP, new Class<?>[] {Instrumentation.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "addTransformer":
                            if (registered == null) {
                                throw new UnsupportedOperationException(method.getName());
                            }
                            registered.accept(args[0]);
                            return null;
                        case "getAllLoadedClasses":
                            return loaded.get();
                        case "isModifiableClass":
                            return true;
                        case "retransformClasses":
                            List<Class<?>> batch = new ArrayList<>();
                            for (Object type : (Object[]) args[0]) {
                                batch.add((Class<?>) type);
                            }
                            retransform.accept(batch);
                            return null;
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
    }

    @Test
    void aFailedStartReleasesTheWaitingAndLetsEveryClassThroughUntouched() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, NEVER_MILLIS);
        Future<byte[]> waiting = load(gate, APP, "jakarta/servlet/http/HttpServlet", SERVLET);
        assertWaiting(waiting);
        assertTrue(gate.fail());
        assertNull(waiting.get(10, TimeUnit.SECONDS));
        assertNull(gate.transform((Module) null, APP, "jakarta/servlet/http/HttpServlet", null, null, SERVLET));
        assertTrue(gate.isSettled());
        assertEquals(0, transformed.get());
    }

    @Test
    void aClassThatCouldNotWaitIsRetransformedOnceTheTransformerIsReady() throws Exception {
        StartupGate gate = new StartupGate(noRules(), AGENT, 200);
        Class<?> servlet = Class.forName("jakarta.servlet.http.HttpServlet");
        long started = System.nanoTime();
        assertNull(gate.transform((Module) null, servlet.getClassLoader(), "jakarta/servlet/http/HttpServlet", null,
                null, SERVLET));
        assertTrue(System.nanoTime() - started >= TimeUnit.MILLISECONDS.toNanos(200), "waited the bound first");
        List<Class<?>> retransformed = new ArrayList<>();
        Instrumentation instrumentation = instrumentation(retransformed, String.class, servlet, ArrayList.class);
        gate.open(transformer, instrumentation);
        assertEquals(1, retransformed.size());
        assertSame(servlet, retransformed.get(0));
    }

    private static void assertWaiting(Future<byte[]> loading) throws Exception {
        try {
            loading.get(300, TimeUnit.MILLISECONDS);
            throw new AssertionError("the class load did not wait for the transformer");
        } catch (TimeoutException expected) {
            // still waiting, as it should
        }
    }
}
