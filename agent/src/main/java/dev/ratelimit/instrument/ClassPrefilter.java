package dev.ratelimit.instrument;

import java.nio.charset.StandardCharsets;
import java.util.function.Predicate;
import net.bytebuddy.utility.OpenedClassReader;

/**
 * Looks at a class file's bytes before Byte Buddy parses it: a class can only declare a
 * {@code @RateLimited} method if its constant pool names a type whose simple name is
 * {@code RateLimited}, can only be a servlet entry point if it declares a non-abstract
 * {@code doFilter}/{@code service(ServletRequest, ServletResponse)} (read from its methods table),
 * and otherwise needs a look only if a method rule matches its name.
 * Every other class (nearly all of them) is passed over after a walk of its constant pool instead
 * of a parse.
 */
final class ClassPrefilter {
    /** How a descriptor naming the annotation type ends, whatever its package. */
    private static final byte[] ANNOTATION_MARK = "RateLimited;".getBytes(StandardCharsets.US_ASCII);
    // Not just "jakarta/servlet/": hundreds of a web application's classes name the servlet API
    // (every one handling an HttpServletRequest), and each would cost a parse and a walk up its
    // type hierarchy; only a few declare an entry point.
    private static final byte[] JAKARTA_ENTRY_POINT = "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] JAVAX_ENTRY_POINT = "(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DO_FILTER_NAME = "doFilter".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVICE_NAME = "service".getBytes(StandardCharsets.US_ASCII);

    /** What {@link #scan} found. */
    static final int ANNOTATION = 1;
    static final int ENTRY_POINT = 2;

    private ClassPrefilter() {
    }

    /**
     * The internal name a class file gives itself, or null when it cannot be read. The JVM hands
     * transformers no name for a class defined with {@code defineClass(null, ...)}; such a class
     * was passed over, annotated or named by a rule.
     */
    static String nameOf(byte[] classFile) {
        try {
            return classFile == null ? null : OpenedClassReader.of(classFile).getClassName();
        } catch (RuntimeException unreadable) {
            return null;
        }
    }

    /**
     * Whether {@code module} is one of the JDK's: the application loader defines some
     * ({@code jdk.compiler}, {@code jdk.jdi}), whose {@code com.sun.} classes are the JDK's, where
     * an application's own are not. Told by where the module comes from, the run-time image of the
     * boot layer, not by its name alone: an application may name a module {@code jdk.acme}, and
     * javax.annotation-api's automatic module is {@code java.annotation} (a review found both never
     * limited on the module path). Null (not known) and the unnamed module are not the JDK's.
     */
    static boolean ofTheJdk(Module module) {
        if (module == null || !module.isNamed()) {
            return false;
        }
        String name = module.getName();
        return (name.startsWith("jdk.") || name.startsWith("java.")) && module.getLayer() == ModuleLayer.boot()
                && JdkModules.NAMES.contains(name);
    }

    /** The boot layer's modules from the run-time image ({@code jrt:}), made at the first named module asked about. */
    private static final class JdkModules {
        static final java.util.Set<String> NAMES = names();

        private static java.util.Set<String> names() {
            java.util.Set<String> names = new java.util.HashSet<>();
            for (java.lang.module.ResolvedModule resolved : ModuleLayer.boot().configuration().modules()) {
                if (resolved.reference().location().map(uri -> "jrt".equals(uri.getScheme())).orElse(false)) {
                    names.add(resolved.name());
                }
            }
            return names;
        }
    }

    /**
     * Whether a class may need instrumenting: it names the annotation or a servlet entry point, or
     * {@code namesClass} (given the binary name) says a method rule names it.
     */
    static boolean worthALook(String internalName, byte[] classFile, Predicate<String> namesClass) {
        return classFile != null && (scan(classFile) != 0
                || (internalName != null && namesClass.test(internalName.replace('/', '.'))));
    }

    /**
     * Walks the constant pool, looking only at its strings, then (if it holds an entry-point
     * descriptor) the methods table: a few hundred length checks per class rather than a parse,
     * which matters because every class the application loads comes through here.
     *
     * <p>{@link #ENTRY_POINT} means the class <em>declares</em> a non-abstract {@code doFilter}
     * or {@code service} taking ({@code ServletRequest, ServletResponse}), as
     * {@link ServletTransformer#types()} requires: a web application has dozens of classes that
     * only call one (every filter calls {@code chain.doFilter}), and each would cost Byte Buddy a
     * parse and a walk up its type hierarchy. {@link #ANNOTATION} means a string of the pool ends
     * in {@code RateLimited;}. Anything it cannot read (a class file version with constants it does
     * not know, a truncated file, a pool holding one of the strings it looks for twice) counts as
     * both, so an unexpected format costs a parse, never a missed class.
     */
    static int scan(byte[] classFile) {
        try {
            int count = readU2(classFile, 8);
            int at = 10;
            int found = 0;
            // constant pool indexes of the strings an entry point is made of; 0 while not seen
            int doFilter = 0;
            int service = 0;
            int jakarta = 0;
            int javax = 0;
            for (int index = 1; index < count; index++) {
                int tag = classFile[at] & 0xFF;
                switch (tag) {
                    case 1: // Utf8
                        int length = readU2(classFile, at + 1);
                        int from = at + 3;
                        switch (classify(classFile, from, length)) {
                            case ANNOTATION:
                                found |= ANNOTATION;
                                break;
                            case JAKARTA:
                                jakarta = once(jakarta, index);
                                break;
                            case JAVAX:
                                javax = once(javax, index);
                                break;
                            case DO_FILTER:
                                doFilter = once(doFilter, index);
                                break;
                            case SERVICE:
                                service = once(service, index);
                                break;
                            default:
                                break;
                        }
                        at = from + length;
                        break;
                    case 7: case 8: case 16: case 19: case 20: // Class, String, MethodType, Module, Package
                        at += 3;
                        break;
                    case 15: // MethodHandle
                        at += 4;
                        break;
                    case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
                        at += 5;
                        break;
                    case 5: case 6: // Long, Double: two entries
                        at += 9;
                        index++;
                        break;
                    default:
                        return ANNOTATION | ENTRY_POINT;
                }
            }
            if ((jakarta | javax) != 0 && (doFilter | service) != 0
                    && declaresEntryPoint(classFile, at, doFilter, service, jakarta, javax)) {
                found |= ENTRY_POINT;
            }
            return found;
        } catch (ArrayIndexOutOfBoundsException | DuplicateString unreadable) {
            return ANNOTATION | ENTRY_POINT;
        }
    }

    /** What {@link #classify} found in one string of the pool (ANNOTATION is one of them). */
    private static final int JAKARTA = 4;
    private static final int JAVAX = 8;
    private static final int DO_FILTER = 16;
    private static final int SERVICE = 32;
    private static final int ACC_ABSTRACT = 0x0400;

    /** A string looked for appears twice in one pool (javac never does this, other tools may). */
    private static final class DuplicateString extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final DuplicateString INSTANCE = new DuplicateString();

        private DuplicateString() {
            super(null, null, false, false);
        }
    }

    private static int once(int known, int index) {
        if (known != 0) {
            throw DuplicateString.INSTANCE;
        }
        return index;
    }

    /**
     * Whether the methods table, after the constant pool that ends at {@code at}, holds a
     * non-abstract method named {@code doFilter} or {@code service} with an entry-point descriptor.
     */
    private static boolean declaresEntryPoint(byte[] classFile, int at, int doFilter, int service, int jakarta,
            int javax) {
        at += 6; // access flags, this class, super class
        at += 2 + 2 * readU2(classFile, at); // interfaces
        int fields = readU2(classFile, at);
        at += 2;
        for (int i = 0; i < fields; i++) {
            at = skipAttributes(classFile, at + 6);
        }
        int methods = readU2(classFile, at);
        at += 2;
        for (int i = 0; i < methods; i++) {
            int access = readU2(classFile, at);
            int name = readU2(classFile, at + 2);
            int descriptor = readU2(classFile, at + 4);
            if ((access & ACC_ABSTRACT) == 0
                    && name != 0 && (name == doFilter || name == service)
                    && descriptor != 0 && (descriptor == jakarta || descriptor == javax)) {
                return true;
            }
            at = skipAttributes(classFile, at + 6);
        }
        return false;
    }

    /** Skips the attribute count at {@code at} and the attributes after it. */
    private static int skipAttributes(byte[] classFile, int at) {
        int attributes = readU2(classFile, at);
        at += 2;
        for (int i = 0; i < attributes; i++) {
            long length = readU4(classFile, at + 2);
            if (length > classFile.length) {
                throw new ArrayIndexOutOfBoundsException((int) Math.min(Integer.MAX_VALUE, length));
            }
            at += 6 + (int) length;
        }
        return at;
    }

    private static int classify(byte[] data, int from, int length) {
        if (length == JAKARTA_ENTRY_POINT.length && regionEquals(data, from, JAKARTA_ENTRY_POINT)) {
            return JAKARTA;
        }
        if (length == JAVAX_ENTRY_POINT.length && regionEquals(data, from, JAVAX_ENTRY_POINT)) {
            return JAVAX;
        }
        if (length == DO_FILTER_NAME.length && regionEquals(data, from, DO_FILTER_NAME)) {
            return DO_FILTER;
        }
        if (length == SERVICE_NAME.length && regionEquals(data, from, SERVICE_NAME)) {
            return SERVICE;
        }
        if (length >= ANNOTATION_MARK.length && data[from + length - 1] == ';'
                && regionEquals(data, from + length - ANNOTATION_MARK.length, ANNOTATION_MARK)) {
            return ANNOTATION;
        }
        return 0;
    }

    private static boolean regionEquals(byte[] data, int from, byte[] pattern) {
        if (from + pattern.length > data.length) {
            throw new ArrayIndexOutOfBoundsException(from + pattern.length);
        }
        for (int i = 0; i < pattern.length; i++) {
            if (data[from + i] != pattern[i]) {
                return false;
            }
        }
        return true;
    }

    private static long readU4(byte[] data, int at) {
        return (long) readU2(data, at) << 16 | readU2(data, at + 2);
    }

    private static int readU2(byte[] data, int at) {
        return (data[at] & 0xFF) << 8 | (data[at + 1] & 0xFF);
    }
}
