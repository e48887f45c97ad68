package dev.ratelimit.instrument;

import java.lang.instrument.IllegalClassFormatException;
import java.nio.charset.StandardCharsets;
import java.security.ProtectionDomain;
import java.util.function.Predicate;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;

/**
 * Looks at a class file's bytes before Byte Buddy parses it: a class can only declare a
 * {@code @RateLimited} method if its constant pool names a type whose simple name is
 * {@code RateLimited}, can only be a servlet entry point if its constant pool holds the descriptor of
 * {@code doFilter}/{@code service(ServletRequest, ServletResponse)} (a class declaring such a
 * method must), and otherwise needs a look only if a method rule matches its name.
 * Every other class (nearly all of them) is passed over after a walk of its constant pool instead
 * of a parse.
 */
final class ClassPrefilter implements AgentBuilder.TransformerDecorator {
    /** How a descriptor naming the annotation type ends, whatever its package. */
    private static final byte[] ANNOTATION_MARK = "RateLimited;".getBytes(StandardCharsets.US_ASCII);
    // Not just "jakarta/servlet/": hundreds of a web application's classes name the servlet API
    // (every one handling an HttpServletRequest), and each would cost a parse and a walk up its
    // type hierarchy; only a few declare an entry point.
    private static final byte[] JAKARTA_ENTRY_POINT = "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] JAVAX_ENTRY_POINT = "(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V"
            .getBytes(StandardCharsets.US_ASCII);

    /** What {@link #scan} found. */
    static final int ANNOTATION = 1;
    static final int ENTRY_POINT = 2;

    private final LimitedMethodTransformer.RuleBookSource rules;

    ClassPrefilter(LimitedMethodTransformer.RuleBookSource rules) {
        this.rules = rules;
    }

    @Override
    public ResettableClassFileTransformer decorate(ResettableClassFileTransformer transformer) {
        return new Filtering(transformer, rules);
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
     * Walks the constant pool and looks only at its strings: a few hundred length checks per
     * class rather than a comparison at every byte of the file, which matters because every
     * class the application loads comes through here. Anything it cannot read (a class file
     * version with constants it does not know, a truncated file) counts as worth a look, so an
     * unexpected format costs a parse, never a missed class.
     */
    static int scan(byte[] classFile) {
        try {
            int count = readU2(classFile, 8);
            int at = 10;
            int found = 0;
            for (int index = 1; index < count; index++) {
                int tag = classFile[at] & 0xFF;
                switch (tag) {
                    case 1: // Utf8
                        int length = readU2(classFile, at + 1);
                        found |= classify(classFile, at + 3, length);
                        at += 3 + length;
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
            return found;
        } catch (ArrayIndexOutOfBoundsException truncated) {
            return ANNOTATION | ENTRY_POINT;
        }
    }

    private static int classify(byte[] data, int from, int length) {
        if (length == JAKARTA_ENTRY_POINT.length && regionEquals(data, from, JAKARTA_ENTRY_POINT)
                || length == JAVAX_ENTRY_POINT.length && regionEquals(data, from, JAVAX_ENTRY_POINT)) {
            return ENTRY_POINT;
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

    private static int readU2(byte[] data, int at) {
        return (data[at] & 0xFF) << 8 | (data[at + 1] & 0xFF);
    }

    private static final class Filtering extends ResettableClassFileTransformer.WithDelegation {
        private final LimitedMethodTransformer.RuleBookSource rules;

        Filtering(ResettableClassFileTransformer delegate, LimitedMethodTransformer.RuleBookSource rules) {
            super(delegate);
            this.rules = rules;
        }

        private boolean worthALook(String internalName, byte[] classFile) {
            return ClassPrefilter.worthALook(internalName, classFile, name -> rules.current().namesClass(name));
        }

        @Override
        public byte[] transform(ClassLoader loader, String internalName, Class<?> redefined, ProtectionDomain domain,
                byte[] classFile) throws IllegalClassFormatException {
            return worthALook(internalName, classFile)
                    ? classFileTransformer.transform(loader, internalName, redefined, domain, classFile)
                    : null;
        }

        @Override
        public byte[] transform(Module module, ClassLoader loader, String internalName, Class<?> redefined,
                ProtectionDomain domain, byte[] classFile) throws IllegalClassFormatException {
            return worthALook(internalName, classFile)
                    ? classFileTransformer.transform(module, loader, internalName, redefined, domain, classFile)
                    : null;
        }
    }
}
