package dev.ratelimit.benchmarks;

import dev.ratelimit.benchmarks.target.AnnotatedTarget;
import dev.ratelimit.benchmarks.target.OverloadedTarget;
import dev.ratelimit.benchmarks.target.PatternTarget;
import dev.ratelimit.benchmarks.target.PlainTarget;
import java.lang.management.ManagementFactory;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * A method under an allowing rule, with the real agent jar installed in the fork, beside the same
 * method in a fork with no agent. {@code *_agent} forks run with {@link #AGENT}; {@code *_none}
 * forks run with nothing added. {@code unruled_agent} is a method no rule names, in a fork with
 * the agent: what the agent's mere presence costs.
 *
 * <p>Paths are relative to the working directory: run it from {@code benchmarks/} (the build
 * copies {@code instrumented-call.yaml} to {@code target/classes/}).
 *
 * <p>Proof that the advice ran: the setup makes one call and reads the rule's MBean
 * ({@code dev.ratelimit:type=Rule,name=...}, attribute {@code Allowed}); under the agent it must be
 * above zero, and the tear-down requires it to have grown by at least the number of calls the
 * trial made, else the run fails. Without the agent, no {@code dev.ratelimit} MBean may exist.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Threads(1)
@State(Scope.Thread)
public class InstrumentedCallBenchmark {
    static final String AGENT =
            "-javaagent:../agent/target/rate-limit-agent.jar=config=target/classes/instrumented-call.yaml";
    static final String ANNOTATION_RULE = "AnnotatedTarget#work";
    static final String PATTERN_RULE = "bench-pattern";
    static final String OVERLOADS_RULE = "bench-overloads";

    final AnnotatedTarget annotated = new AnnotatedTarget();
    final PatternTarget pattern = new PatternTarget();
    final OverloadedTarget overloaded = new OverloadedTarget();
    final PlainTarget plain = new PlainTarget();
    long x = 42;

    private boolean agent;
    private String rule;
    private long allowedAtStart;
    private long calls;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) throws JMException, InterruptedException {
        String name = params.getBenchmark();
        String method = name.substring(name.lastIndexOf('.') + 1);
        agent = method.endsWith("_agent");
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> ours = server.queryNames(new ObjectName("dev.ratelimit:*"), null);
        if (!agent) {
            if (!ours.isEmpty()) {
                throw new IllegalStateException("a fork meant to run without the agent has its MBeans: " + ours);
            }
            return;
        }
        // the agent finishes starting on a thread of its own while the fork starts (README, start-up),
        // and registers its MBean last: wait for it, within reason
        ObjectName agentBean = new ObjectName("dev.ratelimit:type=Agent");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!server.isRegistered(agentBean) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        if (!server.isRegistered(agentBean)) {
            throw new IllegalStateException("the agent is not installed in this fork (no dev.ratelimit:type=Agent MBean"
                    + " after 30 s)");
        }
        // one call each, so the classes are loaded (and instrumented) and inline rules exist
        annotated.work(1);
        pattern.work(1);
        overloaded.work(1);
        overloaded.work(1, 1);
        plain.work(1);
        if (method.startsWith("annotated")) {
            rule = ANNOTATION_RULE;
        } else if (method.startsWith("pattern")) {
            rule = PATTERN_RULE;
        } else if (method.startsWith("overloaded")) {
            rule = OVERLOADS_RULE;
        } else {
            return;
        }
        allowedAtStart = allowed(server, rule);
        if (allowedAtStart <= 0) {
            throw new IllegalStateException("the advice did not run: rule '" + rule + "' has Allowed = "
                    + allowedAtStart + " after a call");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown(BenchmarkParams params) throws JMException {
        if (!agent) {
            return;
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        long agentErrors = ((Number) server.getAttribute(new ObjectName("dev.ratelimit:type=Agent"), "AgentErrors"))
                .longValue();
        if (agentErrors != 0) {
            throw new IllegalStateException("the agent counted " + agentErrors + " errors");
        }
        if (rule == null) {
            return;
        }
        long grown = allowed(server, rule) - allowedAtStart;
        System.out.println();
        System.out.println("[advice check] rule '" + rule + "': Allowed grew by " + grown + " during the trial"
                + " (" + calls + " calls counted by the benchmark)");
        if (grown < calls || grown == 0) {
            throw new IllegalStateException("the advice did not run on every call: rule '" + rule + "' allowed "
                    + grown + " of " + calls + " calls");
        }
    }

    private static long allowed(MBeanServer server, String rule) throws JMException {
        for (ObjectName name : server.queryNames(new ObjectName("dev.ratelimit:type=Rule,*"), null)) {
            String value = name.getKeyProperty("name");
            if (value.startsWith("\"")) {
                value = ObjectName.unquote(value);
            }
            if (value.equals(rule)) {
                return ((Number) server.getAttribute(name, "Allowed")).longValue();
            }
        }
        throw new IllegalStateException("no MBean for rule '" + rule + "'");
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = AGENT)
    public long annotated_agent() {
        calls++;
        return annotated.work(x);
    }

    @Benchmark
    @Fork(1)
    public long annotated_none() {
        calls++;
        return annotated.work(x);
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = AGENT)
    public long pattern_agent() {
        calls++;
        return pattern.work(x);
    }

    @Benchmark
    @Fork(1)
    public long pattern_none() {
        calls++;
        return pattern.work(x);
    }

    /** A rule bound to two methods: the call also keeps its rule on the thread's call stack. */
    @Benchmark
    @Fork(value = 1, jvmArgsAppend = AGENT)
    public long overloaded_agent() {
        calls++;
        return overloaded.work(x);
    }

    @Benchmark
    @Fork(1)
    public long overloaded_none() {
        calls++;
        return overloaded.work(x);
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = AGENT)
    public long unruled_agent() {
        calls++;
        return plain.work(x);
    }
}
