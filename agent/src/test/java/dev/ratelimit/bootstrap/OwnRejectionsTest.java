package dev.ratelimit.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.RateLimitExceededException;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A loader that defined its own copy of the API's exception (the application's, before an
 * attach; a child-first web application or plugin loader) knows another class of that name: a
 * rejection thrown as the agent's copy escaped a {@code catch} in its code (review of the
 * twenty-fourth round). It is thrown as the copy the limited method's caller knows, and read
 * back from either copy. (Chosen by the limited method's own loader, the first version broke a
 * host that catches what a plugin's method throws: the second case here.)
 */
public class OwnRejectionsTest {
    /** A class of the application's with a limited method, as its exit advice calls the bridge. */
    public static final class Woven {
        public static Throwable reject(Throwable rejection) {
            return RateLimitBridge.thrownIn(Woven.class, rejection);
        }

        /** The limited method called by JDK code through a method reference made here. */
        public static Throwable byReference(Throwable rejection) {
            return java.util.stream.Stream.of(rejection).map(Woven::reject).findFirst().get();
        }

        /** Another method of the class calling the limited one (and catching what it throws). */
        public static Throwable call(Throwable rejection) {
            return reject(rejection);
        }
    }

    /** A limited method reached through its bridge (bridges are never woven). */
    public static final class Generic implements java.util.function.Function<Throwable, Throwable> {
        @Override
        public Throwable apply(Throwable rejection) {
            return RateLimitBridge.thrownIn(Generic.class, rejection);
        }
    }

    /** The code that calls the limited method, and catches what it throws. */
    public static final class Caller {
        public static Throwable call(Throwable rejection) {
            return Woven.reject(rejection);
        }
    }

    private static final RateLimitExceededException REJECTION =
            new RateLimitExceededException("per-user", Duration.ofSeconds(7));

    private static Throwable invoke(ClassLoader loader, Class<?> type, String method) throws Exception {
        return (Throwable) loader.loadClass(type.getName()).getMethod(method, Throwable.class).invoke(null, REJECTION);
    }

    /** After an attach, or in a web application with the API jar in WEB-INF/lib: its own copy. */
    @Test
    void aCallerAndALimitedMethodOfALoaderWithItsOwnCopyGetThatCopy() throws Exception {
        ClassLoader own = childFirst(Woven.class, Caller.class, RateLimitExceededException.class);
        Class<?> ownException = own.loadClass(RateLimitExceededException.class.getName());
        assertNotSame(RateLimitExceededException.class, ownException, "the case under test");
        long errors = RateLimitBridge.agentErrors();

        Throwable thrown = invoke(own, Caller.class, "call");
        assertSame(ownException, thrown.getClass(), "the copy the application's catch names");
        assertEquals("per-user", ownException.getMethod("rule").invoke(thrown));
        assertEquals(Duration.ofSeconds(7), ownException.getMethod("retryAfter").invoke(thrown));
        assertEquals(0, thrown.getStackTrace().length, "as the agent's: no stack trace");
        assertEquals(errors, RateLimitBridge.agentErrors());

        // read back, as the servlet advice reads what escapes a servlet
        RateLimitExceededException read = OwnRejections.read(thrown);
        assertEquals("per-user", read.rule());
        assertEquals(Duration.ofSeconds(7), read.retryAfter());
    }

    /**
     * A host that calls a plugin's limited method (the plugin's loader child-first over its own
     * copy of the API jar) and catches the rejection: the host's copy, the agent's. Called here
     * through reflection, whose frames are not the caller.
     */
    @Test
    void aCallerOutsideTheLimitedMethodsLoaderGetsItsOwnLoadersCopy() throws Exception {
        ClassLoader plugin = childFirst(Woven.class, RateLimitExceededException.class);
        assertSame(REJECTION, invoke(plugin, Woven.class, "reject"));
    }

    /**
     * A method of the limited method's own class calls it and catches: the copy its class's loader
     * knows, whoever called that method (here the test, whose loader finds the agent's copy).
     */
    @Test
    void aCallFromTheLimitedMethodsOwnClassGetsThatClassesCopy() throws Exception {
        ClassLoader own = childFirst(Woven.class, RateLimitExceededException.class);
        Throwable thrown = invoke(own, Woven.class, "call");
        assertSame(own.loadClass(RateLimitExceededException.class.getName()), thrown.getClass());
    }

    /** A method reference's caller is the class that made it, not the JDK code that runs it. */
    @Test
    void aMethodReferencesCallerIsTheClassThatMadeIt() throws Exception {
        ClassLoader own = childFirst(Woven.class, RateLimitExceededException.class);
        Throwable thrown = invoke(own, Woven.class, "byReference");
        assertSame(own.loadClass(RateLimitExceededException.class.getName()), thrown.getClass());
    }

    /** A host calling a plugin's limited method through its bridge: the bridge is not the caller. */
    @Test
    @SuppressWarnings("unchecked")
    void aBridgeToTheLimitedMethodIsNotItsCaller() throws Exception {
        ClassLoader plugin = childFirst(Generic.class, RateLimitExceededException.class);
        java.util.function.Function<Object, Object> generic = (java.util.function.Function<Object, Object>)
                plugin.loadClass(Generic.class.getName()).getConstructor().newInstance();
        assertSame(REJECTION, generic.apply(REJECTION));
    }

    /** A web application's code calling a limited method of a shared library: the application's copy. */
    @Test
    void aCallerWithItsOwnCopyCallingALimitedMethodOfTheParentGetsItsCopy() throws Exception {
        ClassLoader webApp = childFirst(Caller.class, RateLimitExceededException.class);
        Throwable thrown = invoke(webApp, Caller.class, "call");
        assertSame(webApp.loadClass(RateLimitExceededException.class.getName()), thrown.getClass());
    }

    @Test
    void aLoaderThatFindsTheAgentsCopyGetsTheRejectionItself() {
        assertSame(REJECTION, Caller.call(REJECTION), "the application's loader");
        assertSame(REJECTION, RateLimitBridge.thrownIn(String.class, REJECTION), "the boot loader");
        assertSame(REJECTION, RateLimitBridge.thrownIn(null, REJECTION));
        IllegalStateException other = new IllegalStateException();
        assertSame(other, RateLimitBridge.thrownIn(Woven.class, other), "not a rejection");
    }

    /** No frame of the limited method in reach (not called from it): its own loader's copy. */
    @Test
    void withoutTheLimitedMethodOnTheStackItsLoaderChooses() throws Exception {
        ClassLoader own = childFirst(Woven.class, RateLimitExceededException.class);
        Throwable thrown = RateLimitBridge.thrownIn(own.loadClass(Woven.class.getName()), REJECTION);
        assertSame(own.loadClass(RateLimitExceededException.class.getName()), thrown.getClass());
    }

    @Test
    void aLoaderWithoutTheApiGetsTheAgentsCopy() throws Exception {
        // a loader that cannot find the class at all (the agent's is on the boot class path in a
        // real JVM; here, under test, it is not visible to such a loader either way)
        ClassLoader isolated = new ClassLoader(null) {
            @Override
            protected Class<?> findClass(String name) throws ClassNotFoundException {
                if (name.equals(Woven.class.getName())) {
                    byte[] bytes = bytesOf(Woven.class);
                    return defineClass(name, bytes, 0, bytes.length);
                }
                throw new ClassNotFoundException(name);
            }
        };
        assertSame(REJECTION, RateLimitBridge.thrownIn(isolated.loadClass(Woven.class.getName()), REJECTION));
    }

    @Test
    void onlyTheApisExceptionIsRead() {
        assertNull(OwnRejections.read(new IllegalStateException("dev.ratelimit.RateLimitExceededException")));
        assertNull(OwnRejections.read(new RuntimeException()));
        RateLimitExceededException ours = new RateLimitExceededException("r", Duration.ofSeconds(1));
        RateLimitExceededException read = OwnRejections.read(ours);
        assertTrue(read != null && read.rule().equals("r"), "the agent's copy reads too");
    }

    /** A loader that defines {@code types} itself, from their class files, and asks its parent for the rest. */
    public static ClassLoader childFirst(Class<?>... types) {
        Set<String> own = new java.util.HashSet<>();
        for (Class<?> type : types) {
            own.add(type.getName());
        }
        return new ClassLoader(OwnRejectionsTest.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                synchronized (getClassLoadingLock(name)) {
                    if (own.contains(name)) {
                        Class<?> loaded = findLoadedClass(name);
                        if (loaded == null) {
                            byte[] bytes = bytesOf(name);
                            // as the agent's transformer is told of each class a loader defines
                            ExceptionCopies.defined(this, name.replace('.', '/'));
                            loaded = defineClass(name, bytes, 0, bytes.length);
                        }
                        return loaded;
                    }
                    return super.loadClass(name, resolve);
                }
            }
        };
    }

    static byte[] bytesOf(Class<?> type) {
        return bytesOf(type.getName());
    }

    static byte[] bytesOf(String name) {
        try (InputStream in = OwnRejectionsTest.class.getClassLoader()
                .getResourceAsStream(name.replace('.', '/') + ".class")) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
