package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Exit advice for a limited method that returns a value. A rejection never throws from enter
 * advice (suppressed advice would swallow it): enter returns it, the body is skipped, and this
 * advice assigns it as the thrown exception, or assigns the return kind's default value.
 */
final class ValueExitAdvice {
    private ValueExitAdvice() {
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.Enter Object rejection, @ReturnKind int kind,
            @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned,
            @Advice.Thrown(readOnly = false) Throwable thrown, @Advice.Local(MethodEnterAdvice.SCOPE) Object scope,
            @Advice.Origin Class<?> woven, @ReturnTypeName String returnType) {
        if (scope != null) {
            RateLimitBridge.exitMethod(scope);
        }
        if (rejection != null) {
            if (rejection instanceof Throwable) {
                thrown = RateLimitBridge.thrownIn(woven, (Throwable) rejection);
            } else {
                // the name is a constant, loaded only here: the allowed path does not see it
                returned = RateLimitBridge.defaultValue(kind, woven, returnType);
            }
        }
    }
}
