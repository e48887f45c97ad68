package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/** As {@link MethodEnterAdvice}, for methods whose rules key on their arguments. */
final class ArgumentsEnterAdvice {
    private ArgumentsEnterAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static Object enter(@SiteId int site, @Advice.AllArguments Object[] arguments) {
        return RateLimitBridge.enterMethod(site, arguments);
    }
}
