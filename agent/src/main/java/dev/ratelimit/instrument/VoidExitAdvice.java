package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/** As {@link ValueExitAdvice}, for {@code void} methods: a default "return" just skips the body. */
final class VoidExitAdvice {
    private VoidExitAdvice() {
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.Enter Object rejection, @Advice.Thrown(readOnly = false) Throwable thrown,
            @Advice.Local(MethodEnterAdvice.SCOPE) Object scope, @Advice.Origin Class<?> woven) {
        if (scope != null) {
            RateLimitBridge.exitMethod(scope);
        }
        if (rejection instanceof Throwable) {
            thrown = RateLimitBridge.thrownIn(woven, (Throwable) rejection);
        }
    }
}
