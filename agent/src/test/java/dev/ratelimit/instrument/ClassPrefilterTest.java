package dev.ratelimit.instrument;

import static net.bytebuddy.matcher.ElementMatchers.named;
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
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.FixedValue;
import net.bytebuddy.implementation.StubMethod;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.pool.TypePool;
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

    /** Whether the walk found a declared doFilter/service(ServletRequest, ServletResponse). */
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
     * Every class of Tomcat, Jetty's servlet module and both servlet APIs: the walk finds an entry
     * point exactly where ASM, reading the whole class file, finds a declared non-abstract
     * doFilter/service(ServletRequest, ServletResponse). A walk that lost its place in the
     * constant pool, the fields or the methods would miss them or fail. So does Byte Buddy's own
     * matcher: every class it accepts is one the walk let through.
     */
    @Test
    void theWalkAgreesWithAFullParseOnWholeLibraries() throws Exception {
        int classes = 0;
        int entryPoints = 0;
        int mentions = 0;
        for (Class<?> inJar : new Class<?>[] {ApplicationFilterChain.class, ServletHandler.class,
                jakarta.servlet.Servlet.class, javax.servlet.Servlet.class}) {
            File jar = new File(inJar.getProtectionDomain().getCodeSource().getLocation().toURI());
            TypePool pool = TypePool.Default.of(new ClassFileLocator.Compound(
                    ClassFileLocator.ForJarFile.of(jar), ClassFileLocator.ForClassLoader.ofSystemLoader()));
            try (JarFile file = new JarFile(jar)) {
                for (JarEntry entry : Collections.list(file.entries())) {
                    if (!entry.getName().endsWith(".class") || entry.getName().contains("module-info")) {
                        continue;
                    }
                    byte[] bytes;
                    try (InputStream in = file.getInputStream(entry)) {
                        bytes = in.readAllBytes();
                    }
                    boolean expected = declaresEntryPoint(bytes);
                    int found = ClassPrefilter.scan(bytes);
                    assertEquals(expected ? ClassPrefilter.ENTRY_POINT : 0, found, entry.getName());
                    String name = entry.getName().substring(0, entry.getName().length() - ".class".length());
                    if (ServletTransformer.types().matches(pool.describe(name.replace('/', '.')).resolve())) {
                        assertTrue(expected, "Byte Buddy instruments " + name + ": the walk must let it through");
                    }
                    classes++;
                    entryPoints += expected ? 1 : 0;
                    mentions += contains(bytes, "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V")
                            || contains(bytes, "(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V") ? 1 : 0;
                }
            }
        }
        assertTrue(classes > 1000, "classes walked: " + classes);
        assertTrue(entryPoints > 10, "entry points found: " + entryPoints);
        // the point of reading the methods table: most classes holding the descriptor only call it
        assertTrue(mentions > 2 * entryPoints, "classes naming the descriptor " + mentions + ", declaring " + entryPoints);
    }

    /** The reference: ASM reads the methods of the class. */
    private static boolean declaresEntryPoint(byte[] classFile) {
        boolean[] found = {false};
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                    String[] exceptions) {
                if ((access & Opcodes.ACC_ABSTRACT) == 0
                        && (name.equals("doFilter") || name.equals("service"))
                        && (descriptor.equals("(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V")
                                || descriptor.equals("(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V"))) {
                    found[0] = true;
                }
                return null;
            }
        }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        return found[0];
    }

    /**
     * Made-up servlets: the matcher and the walk agree on what is an entry point, including
     * the shapes no library has (a non-void overload, arguments of two namespaces).
     */
    @Test
    void theMatcherAndTheWalkAgreeOnMadeUpServlets() {
        Object[][] cases = {
            {void.class, javax.servlet.ServletRequest.class, javax.servlet.ServletResponse.class, true},
            {void.class, jakarta.servlet.ServletRequest.class, jakarta.servlet.ServletResponse.class, true},
            {boolean.class, javax.servlet.ServletRequest.class, javax.servlet.ServletResponse.class, false},
            {void.class, jakarta.servlet.ServletRequest.class, javax.servlet.ServletResponse.class, false},
        };
        for (Object[] shape : cases) {
            DynamicType.Unloaded<?> servlet = new ByteBuddy()
                    .subclass(javax.servlet.http.HttpServlet.class)
                    .defineMethod("doFilter", (Class<?>) shape[0], Visibility.PUBLIC)
                    .withParameters((Class<?>) shape[1], (Class<?>) shape[2])
                    .intercept(shape[0] == void.class ? StubMethod.INSTANCE : FixedValue.value(true))
                    .make();
            boolean expected = (Boolean) shape[3];
            String what = Arrays.toString(shape);
            assertEquals(expected, mentionsServletApi(servlet.getBytes()), what);
            assertEquals(expected, ServletTransformer.entryPoints().matches(
                    servlet.getTypeDescription().getDeclaredMethods().filter(named("doFilter")).getOnly()), what);
        }
    }

    @Test
    void aFilterThatCallsTheChainIsNotAnEntryPoint() {
        // calls chain.doFilter(request, response): its pool holds the descriptor, its methods do not
        byte[] filter = classFile("org/apache/catalina/filters/RequestDumperFilter");
        assertTrue(contains(filter, "(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V"));
        assertFalse(mentionsServletApi(filter));
        // declare service(ServletRequest, ServletResponse) abstract: nothing to instrument there
        assertFalse(mentionsServletApi(classFile("jakarta/servlet/Servlet")));
        assertFalse(mentionsServletApi(classFile("jakarta/servlet/GenericServlet")));
    }

    @Test
    void aPoolHoldingALookedForStringTwiceIsWorthALook() {
        // javac writes each string once; a tool that does not would break the index comparison,
        // so the walk gives up and lets Byte Buddy look
        byte[] chain = classFile("org/apache/catalina/core/ApplicationFilterChain");
        byte[] plain = classFile("java/util/ArrayList");
        assertEquals(0, ClassPrefilter.scan(plain));
        byte[] doubled = withUtf8Appended(plain, "service", "service");
        assertEquals(ClassPrefilter.ANNOTATION | ClassPrefilter.ENTRY_POINT, ClassPrefilter.scan(doubled));
        assertEquals(0, ClassPrefilter.scan(withUtf8Appended(plain, "service")), "once is fine");
        assertEquals(ClassPrefilter.ENTRY_POINT, ClassPrefilter.scan(chain));
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

    /** The class file with Utf8 constants added at the end of its pool (nothing refers to them). */
    private static byte[] withUtf8Appended(byte[] classFile, String... strings) {
        int count = (classFile[8] & 0xFF) << 8 | (classFile[9] & 0xFF);
        int end = 10;
        for (int index = 1; index < count; index++) {
            int tag = classFile[end] & 0xFF;
            switch (tag) {
                case 1: end += 3 + ((classFile[end + 1] & 0xFF) << 8 | (classFile[end + 2] & 0xFF)); break;
                case 7: case 8: case 16: case 19: case 20: end += 3; break;
                case 15: end += 4; break;
                case 5: case 6: end += 9; index++; break;
                default: end += 5;
            }
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(classFile, 0, 8);
        int next = count + strings.length;
        out.write(next >> 8);
        out.write(next);
        out.write(classFile, 10, end - 10);
        for (String string : strings) {
            byte[] utf8 = string.getBytes(StandardCharsets.UTF_8);
            out.write(1);
            out.write(utf8.length >> 8);
            out.write(utf8.length);
            out.write(utf8, 0, utf8.length);
        }
        out.write(classFile, end, classFile.length - end);
        return out.toByteArray();
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
