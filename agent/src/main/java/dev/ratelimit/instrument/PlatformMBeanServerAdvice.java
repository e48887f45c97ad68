package dev.ratelimit.instrument;

import dev.ratelimit.bootstrap.RateLimitBridge;
import net.bytebuddy.asm.Advice;

/**
 * Woven into {@code java.lang.management.ManagementFactory.getPlatformMBeanServer}: tells the
 * agent that the platform MBean server exists, so that it registers its MBeans then, and never
 * has to build that server itself (see {@code JmxRegistry}).
 */
final class PlatformMBeanServerAdvice {
    private PlatformMBeanServerAdvice() {
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    static void exit(@Advice.Return Object server) {
        RateLimitBridge.platformMBeanServer(server);
    }
}
