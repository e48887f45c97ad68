package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.annotation.RateLimited;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.apache.catalina.core.ApplicationFilterChain;
import org.eclipse.jetty.ee10.servlet.ServletHandler;
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

    /** A class declaring doFilter/service(ServletRequest, ServletResponse) holds that descriptor. */
    static boolean mentionsServletApi(byte[] classFile) {
        return (ClassPrefilter.scan(classFile) & ClassPrefilter.ENTRY_POINT) != 0;
    }

    static boolean mentionsAnnotation(byte[] classFile) {
        return (ClassPrefilter.scan(classFile) & ClassPrefilter.ANNOTATION) != 0;
    }

    static final class Limited {
        // long and double constants take two constant pool entries: the walk must not lose count
        static final long BIG = 0x1234_5678_9ABC_DEF0L;
        static final double HALF = 0.123456789;

        @RateLimited("x")
        long call() {
            return (long) (BIG * HALF);
        }
    }

    @Test
    void entryPointsOfBothServletNamespacesAreLookedAt() {
        // declare service(ServletRequest, ServletResponse)
        assertTrue(mentionsServletApi(classFile("jakarta/servlet/GenericServlet")));
        assertTrue(mentionsServletApi(classFile("jakarta/servlet/http/HttpServlet")));
        assertTrue(mentionsServletApi(classFile("javax/servlet/http/HttpServlet")));
        // declare doFilter(ServletRequest, ServletResponse): Tomcat's and Jetty's filter chains
        assertTrue(mentionsServletApi(classFile("org/apache/catalina/core/ApplicationFilterChain")));
        assertTrue(mentionsServletApi(classFile("org/eclipse/jetty/ee10/servlet/ServletHandler$Chain")));
        assertTrue(mentionsServletApi(classFile("org/eclipse/jetty/ee10/servlet/ServletHandler$ChainEnd")));
    }

    @Test
    void classesThatOnlyUseTheServletApiAreNot() {
        // both name ServletRequest and ServletResponse types, neither declares an entry point
        assertFalse(mentionsServletApi(classFile("jakarta/servlet/http/HttpServletRequestWrapper")));
        assertFalse(mentionsServletApi(classFile("javax/servlet/http/HttpServletResponseWrapper")));
        assertFalse(mentionsServletApi(classFile("java/util/ArrayList")));
    }

    @Test
    void aClassFileItCannotReadIsWorthALookNotAMiss() {
        byte[] servlet = classFile("jakarta/servlet/http/HttpServlet");
        byte[] truncated = Arrays.copyOf(servlet, servlet.length / 3);
        assertTrue(ClassPrefilter.worthALook("x/Truncated", truncated, name -> false));
        byte[] unknownConstant = servlet.clone();
        unknownConstant[10] = (byte) 99; // the first constant's tag
        assertTrue(ClassPrefilter.worthALook("x/Unknown", unknownConstant, name -> false));
        assertTrue(ClassPrefilter.worthALook("x/Empty", new byte[0], name -> false));
    }

    /**
     * Every class of Tomcat, Jetty's servlet module and both servlet APIs: the walk finds an
     * entry-point descriptor exactly where the bytes hold one (a walk that lost its place in the
     * constant pool would miss them or fail).
     */
    @Test
    void theConstantPoolWalkAgreesWithAByteSearchOnWholeLibraries() throws Exception {
        int classes = 0;
        int entryPoints = 0;
        for (Class<?> inJar : new Class<?>[] {ApplicationFilterChain.class, ServletHandler.class,
                jakarta.servlet.Servlet.class, javax.servlet.Servlet.class}) {
            File jar = new File(inJar.getProtectionDomain().getCodeSource().getLocation().toURI());
            try (JarFile file = new JarFile(jar)) {
                for (JarEntry entry : Collections.list(file.entries())) {
                    if (!entry.getName().endsWith(".class") || entry.getName().contains("module-info")) {
                        continue;
                    }
                    byte[] bytes;
                    try (InputStream in = file.getInputStream(entry)) {
                        bytes = in.readAllBytes();
                    }
                    boolean expected = contains(bytes, "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V")
                            || contains(bytes, "(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V");
                    int found = ClassPrefilter.scan(bytes);
                    assertEquals(expected ? ClassPrefilter.ENTRY_POINT : 0, found,
                            entry.getName());
                    classes++;
                    entryPoints += expected ? 1 : 0;
                }
            }
        }
        assertTrue(classes > 1000, "classes walked: " + classes);
        assertTrue(entryPoints > 10, "entry points found: " + entryPoints);
    }

    private static boolean contains(byte[] data, String text) {
        byte[] pattern = text.getBytes(StandardCharsets.US_ASCII);
        outer:
        for (int i = 0; i + pattern.length <= data.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (data[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    @Test
    void theAnnotationOrARuleNamingTheClassIsEnough() {
        byte[] limited = classFile("dev/ratelimit/instrument/ClassPrefilterTest$Limited");
        byte[] plain = classFile("java/util/ArrayList");
        assertTrue(mentionsAnnotation(limited));
        assertFalse(mentionsAnnotation(plain));
        assertTrue(ClassPrefilter.worthALook("dev/ratelimit/instrument/ClassPrefilterTest$Limited", limited, name -> false));
        assertFalse(ClassPrefilter.worthALook("java/util/ArrayList", plain, name -> false));
        assertTrue(ClassPrefilter.worthALook("java/util/ArrayList", plain, "java.util.ArrayList"::equals));
        assertFalse(ClassPrefilter.worthALook("java/util/ArrayList", null, name -> true));
    }
}
