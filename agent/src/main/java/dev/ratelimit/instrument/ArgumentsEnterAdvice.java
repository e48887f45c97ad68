package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.CallScope;
import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/** As {@link MethodEnterAdvice}, for methods whose rules key on their arguments. */
final class ArgumentsEnterAdvice {
    private ArgumentsEnterAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static Object enter(@SiteId int site, @Advice.AllArguments Object[] arguments,
            @Advice.Local(MethodEnterAdvice.SCOPE) Object scope) {
        Object entered = RateLimitBridge.enterMethod(site, arguments);
        if (entered instanceof CallScope) {
            scope = entered;
            return null;
        }
        return entered;
    }
}
