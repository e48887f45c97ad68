package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/**
 * Enter advice for a limited method whose rules do not read arguments. Inlined into application
 * classes: it may reference only JDK and bridge types. A non-null result skips the method body;
 * the exit advice then throws or returns the default.
 */
final class MethodEnterAdvice {
    private MethodEnterAdvice() {
    }

    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
    static Object enter(@SiteId int site) {
        return RateLimitBridge.enterMethod(site, null);
    }
}
