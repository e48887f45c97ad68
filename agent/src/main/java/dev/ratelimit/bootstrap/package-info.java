/**
 * The bridge: the only classes of the agent an application can load.
 *
 * <p>At start-up {@link dev.ratelimit.bootstrap.AgentLauncher} appends the agent jar to the
 * bootstrap class path, so these classes are the same in every class loader of the host. Advice
 * inlined into application classes calls {@link dev.ratelimit.bootstrap.RateLimitBridge} and
 * nothing else of ours. Everything here uses JDK types only: the runtime (configuration,
 * limiters, Byte Buddy, Caffeine, the YAML parser) lives under {@code inst/} in the jar, is read
 * by {@link dev.ratelimit.bootstrap.RuntimeClassLoader}, and is invisible to the application.
 */
package dev.ratelimit.bootstrap;
