package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.annotation.RateLimited;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;

/** The byte scan that decides which class files Byte Buddy parses at all. */
class ClassPrefilterTest {

    static byte[] classFile(String internalName) {
        try (InputStream in = ClassLoader.getSystemResourceAsStream(internalName + ".class")) {
            if (in == null) {
                throw new IllegalStateException("no class file for " + internalName);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static final class Limited {
        @RateLimited("x")
        void call() {
        }
    }

    @Test
    void entryPointsOfBothServletNamespacesAreLookedAt() {
        // declare service(ServletRequest, ServletResponse)
        assertTrue(ClassPrefilter.mentionsServletApi(classFile("jakarta/servlet/GenericServlet")));
        assertTrue(ClassPrefilter.mentionsServletApi(classFile("jakarta/servlet/http/HttpServlet")));
        assertTrue(ClassPrefilter.mentionsServletApi(classFile("javax/servlet/http/HttpServlet")));
        // declare doFilter(ServletRequest, ServletResponse): Tomcat's and Jetty's filter chains
        assertTrue(ClassPrefilter.mentionsServletApi(classFile("org/apache/catalina/core/ApplicationFilterChain")));
        assertTrue(ClassPrefilter.mentionsServletApi(classFile("org/eclipse/jetty/ee10/servlet/ServletHandler$Chain")));
        assertTrue(ClassPrefilter.mentionsServletApi(classFile("org/eclipse/jetty/ee10/servlet/ServletHandler$ChainEnd")));
    }

    @Test
    void classesThatOnlyUseTheServletApiAreNot() {
        // both name ServletRequest and ServletResponse types, neither declares an entry point
        assertFalse(ClassPrefilter.mentionsServletApi(classFile("jakarta/servlet/http/HttpServletRequestWrapper")));
        assertFalse(ClassPrefilter.mentionsServletApi(classFile("javax/servlet/http/HttpServletResponseWrapper")));
        assertFalse(ClassPrefilter.mentionsServletApi(classFile("java/util/ArrayList")));
    }

    @Test
    void theAnnotationOrARuleNamingTheClassIsEnough() {
        byte[] limited = classFile("dev/ratelimit/instrument/ClassPrefilterTest$Limited");
        byte[] plain = classFile("java/util/ArrayList");
        assertTrue(ClassPrefilter.mentionsAnnotation(limited));
        assertFalse(ClassPrefilter.mentionsAnnotation(plain));
        assertTrue(ClassPrefilter.worthALook("dev/ratelimit/instrument/ClassPrefilterTest$Limited", limited, name -> false));
        assertFalse(ClassPrefilter.worthALook("java/util/ArrayList", plain, name -> false));
        assertTrue(ClassPrefilter.worthALook("java/util/ArrayList", plain, "java.util.ArrayList"::equals));
        assertFalse(ClassPrefilter.worthALook("java/util/ArrayList", null, name -> true));
    }
}
