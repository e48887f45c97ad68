package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.CallScope;
import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/**
 * Enter advice for a limited method whose rules do not read arguments. Inlined into application
 * classes: it may reference only JDK and bridge types. A non-null result skips the method body;
 * the exit advice then throws or returns the default. A {@link CallScope} (the call's rules must
 * not count the calls it makes) is kept in a local for the exit advice to close.
 */
final class MethodEnterAdvice {
    /** The local that carries the call's {@link CallScope} from enter to exit advice. */
    static final String SCOPE = "rateLimitScope";

    private MethodEnterAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static Object enter(@SiteId int site, @Advice.Local(SCOPE) Object scope) {
        Object entered = RateLimitBridge.enterMethod(site, null);
        if (entered instanceof CallScope) {
            scope = entered;
            return null;
        }
        return entered;
    }
}
