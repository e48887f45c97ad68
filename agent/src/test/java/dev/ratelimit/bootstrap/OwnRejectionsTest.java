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
 * attach; a child-first web application loader) knows another class of that name: a rejection
 * thrown as the agent's copy escaped the application's {@code catch} (review of the
 * twenty-fourth round). It is thrown as the woven class's loader's copy, and read back from
 * either copy.
 */
public class OwnRejectionsTest {
    /** A class of the application's, woven. */
    public static final class Woven {
    }

    @Test
    void aRejectionIsThrownAsTheCopyTheWovenClassesLoaderKnows() throws Exception {
        ClassLoader own = childFirst(Woven.class, RateLimitExceededException.class);
        Class<?> woven = own.loadClass(Woven.class.getName());
        Class<?> ownException = own.loadClass(RateLimitExceededException.class.getName());
        assertNotSame(RateLimitExceededException.class, ownException, "the case under test");

        RateLimitExceededException rejection = new RateLimitExceededException("per-user", Duration.ofSeconds(7));
        long errors = RateLimitBridge.agentErrors();
        Throwable thrown = RateLimitBridge.thrownIn(woven, rejection);
        assertSame(ownException, thrown.getClass(), "the copy the application's catch names");
        assertEquals("per-user", ownException.getMethod("rule").invoke(thrown));
        assertEquals(Duration.ofSeconds(7), ownException.getMethod("retryAfter").invoke(thrown));
        assertEquals(0, thrown.getStackTrace().length, "as the agent's: no stack trace");
        assertEquals(errors, RateLimitBridge.agentErrors());

        // read back, also from inside a wrapper, as the servlet advice reads what escapes a servlet
        RateLimitExceededException read = OwnRejections.read(thrown);
        assertEquals("per-user", read.rule());
        assertEquals(Duration.ofSeconds(7), read.retryAfter());
    }

    @Test
    void aLoaderThatFindsTheAgentsCopyGetsTheRejectionItself() {
        RateLimitExceededException rejection = new RateLimitExceededException("r", Duration.ofSeconds(1));
        assertSame(rejection, RateLimitBridge.thrownIn(Woven.class, rejection), "the application's loader");
        assertSame(rejection, RateLimitBridge.thrownIn(String.class, rejection), "the boot loader");
        assertSame(rejection, RateLimitBridge.thrownIn(null, rejection));
        IllegalStateException other = new IllegalStateException();
        assertSame(other, RateLimitBridge.thrownIn(Woven.class, other), "not a rejection");
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
        RateLimitExceededException rejection = new RateLimitExceededException("r", Duration.ofSeconds(1));
        assertSame(rejection, RateLimitBridge.thrownIn(isolated.loadClass(Woven.class.getName()), rejection));
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
