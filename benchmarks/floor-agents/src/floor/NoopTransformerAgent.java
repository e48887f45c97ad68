package floor;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;

/**
 * A Java agent that registers one retransform-capable class file transformer which changes
 * nothing: what being offered every class the application loads costs a start-up, before any
 * work of the agent's own.
 */
public final class NoopTransformerAgent {
    private NoopTransformerAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) {
        instrumentation.addTransformer(new ClassFileTransformer() {
            @Override
            public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
                    ProtectionDomain domain, byte[] classFile) {
                return null;
            }
        }, true);
    }
}
