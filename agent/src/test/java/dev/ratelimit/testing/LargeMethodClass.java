package dev.ratelimit.testing;

import dev.ratelimit.annotation.RateLimited;
import net.bytebuddy.jar.asm.AnnotationVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * The class file of a class with a limited method near the JVM's 64 KB limit for a method's
 * code, which javac cannot be asked to write: public, with two static methods, each under
 * {@code @RateLimited(limit = 5, window = "1h")}: {@code void big()}, {@code nops} no-ops and a
 * return, and {@code long small(long)}, which returns its argument plus one.
 */
public final class LargeMethodClass {
    private LargeMethodClass() {
    }

    public static byte[] of(String internalName, int nops) {
        return write(internalName, nops, null, "big", "()V", Opcodes.ACC_STATIC);
    }

    /**
     * As {@link #of}, the class a {@code jakarta.servlet.Servlet} (its other methods left out: it is
     * woven, never loaded) whose large limited method is its entry point, {@code void
     * service(ServletRequest, ServletResponse)}, an instance method.
     */
    public static byte[] servlet(String internalName, int nops) {
        return write(internalName, nops, new String[] {"jakarta/servlet/Servlet"}, "service",
                "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V", 0);
    }

    private static byte[] write(String internalName, int nops, String[] interfaces, String bigName,
            String bigDescriptor, int bigAccess) {
        ClassWriter writer = new ClassWriter(0);
        writer.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_SUPER, internalName, null, "java/lang/Object",
                interfaces);
        MethodVisitor big = limited(writer, bigName, bigDescriptor, bigAccess);
        for (int i = 0; i < nops; i++) {
            big.visitInsn(Opcodes.NOP);
        }
        big.visitInsn(Opcodes.RETURN);
        big.visitMaxs(0, bigAccess == Opcodes.ACC_STATIC ? 0 : 3);
        big.visitEnd();
        MethodVisitor small = limited(writer, "small", "(J)J", Opcodes.ACC_STATIC);
        small.visitVarInsn(Opcodes.LLOAD, 0);
        small.visitInsn(Opcodes.LCONST_1);
        small.visitInsn(Opcodes.LADD);
        small.visitInsn(Opcodes.LRETURN);
        small.visitMaxs(4, 2);
        small.visitEnd();
        writer.visitEnd();
        return writer.toByteArray();
    }

    private static MethodVisitor limited(ClassWriter writer, String name, String descriptor, int access) {
        MethodVisitor method = writer.visitMethod(Opcodes.ACC_PUBLIC | access, name, descriptor, null, null);
        AnnotationVisitor annotation = method.visitAnnotation("L" + RateLimited.class.getName().replace('.', '/') + ";", true);
        annotation.visit("limit", 5L);
        annotation.visit("window", "1h");
        annotation.visitEnd();
        method.visitCode();
        return method;
    }
}
