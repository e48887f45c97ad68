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
 * Every other class (nearly all of them) is passed over with a byte scan instead of a parse.
 */
final class ClassPrefilter implements AgentBuilder.TransformerDecorator {
    private static final byte[] ANNOTATION_MARK = "RateLimited;".getBytes(StandardCharsets.US_ASCII);
    // Not just "jakarta/servlet/": hundreds of a web application's classes name the servlet API
    // (every one handling an HttpServletRequest), and each would cost a parse and a walk up its
    // type hierarchy; only a few declare an entry point.
    private static final byte[] JAKARTA_ENTRY_POINT = "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] JAVAX_ENTRY_POINT = "(Ljavax/servlet/ServletRequest;Ljavax/servlet/ServletResponse;)V"
            .getBytes(StandardCharsets.US_ASCII);

    private final LimitedMethodTransformer.RuleBookSource rules;

    ClassPrefilter(LimitedMethodTransformer.RuleBookSource rules) {
        this.rules = rules;
    }

    @Override
    public ResettableClassFileTransformer decorate(ResettableClassFileTransformer transformer) {
        return new Filtering(transformer, rules);
    }

    /**
     * Whether a class may need instrumenting: it names the annotation or a servlet API type, or
     * {@code namesClass} (given the binary name) says a method rule names it.
     */
    static boolean worthALook(String internalName, byte[] classFile, Predicate<String> namesClass) {
        return classFile != null && (mentionsAnnotation(classFile) || mentionsServletApi(classFile)
                || (internalName != null && namesClass.test(internalName.replace('/', '.'))));
    }

    static boolean mentionsAnnotation(byte[] classFile) {
        return indexOf(classFile, ANNOTATION_MARK) >= 0;
    }

    /**
     * A class declaring {@code doFilter} or {@code service} of {@code (ServletRequest,
     * ServletResponse)} holds that descriptor (so does one calling such a method: a few more
     * parses, never a miss).
     */
    static boolean mentionsServletApi(byte[] classFile) {
        return indexOf(classFile, JAKARTA_ENTRY_POINT) >= 0 || indexOf(classFile, JAVAX_ENTRY_POINT) >= 0;
    }

    private static int indexOf(byte[] data, byte[] pattern) {
        byte first = pattern[0];
        int last = data.length - pattern.length;
        outer:
        for (int i = 0; i <= last; i++) {
            if (data[i] != first) {
                continue;
            }
            for (int j = 1; j < pattern.length; j++) {
                if (data[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
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
