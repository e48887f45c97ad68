package dev.ratelimit.jmx;

import dev.ratelimit.limit.ActiveRule;
import java.lang.System.Logger.Level;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;

/**
 * Registers the agent's MBeans on the platform MBean server: one per rule, and one for the agent.
 * A rule's MBean reads whichever rule of that name is in force, so a reload re-registers only the
 * rules it adds or removes. Failing to register (a security manager, a clash) is logged and
 * otherwise ignored: metrics never stop the agent.
 *
 * <p>The registry is given the server ({@link #attach}); it never asks for it. Building the
 * platform MBean server (about 160 classes of the JDK, and every platform MXBean) took a quarter
 * of the CPU of the agent's start thread, in applications that often never build it themselves. So at
 * start-up the agent hands the server over when the application, a JMX agent or a JMX client
 * first asks for it, and builds it only if it was asked for before the agent could see that
 * (see {@code AgentInstaller}). Until then, changes of the rules are not registered anywhere:
 * {@link #attach} registers the rules in force at that moment.
 */
public final class JmxRegistry {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private final Function<String, ActiveRule> rules;
    private final AgentMBean agent;
    private final Set<String> registered = new HashSet<>();
    /** Guarded by this; null until {@link #attach}. */
    private MBeanServer server;

    /**
     * @param rules finds the rule of a name now in force, or null
     * @param agent the agent's own MBean
     */
    public JmxRegistry(Function<String, ActiveRule> rules, AgentMBean agent) {
        this.rules = rules;
        this.agent = agent;
    }

    /**
     * Registers the agent's MBean and those of the rules in force on {@code server}, the first
     * time only. The names are read under this registry's lock, so a reload's {@link #sync} that
     * came before (and found no server) is not lost, and one that comes after waits for this.
     *
     * @return false if a server was attached before (nothing changes)
     */
    public synchronized boolean attach(MBeanServer server, Supplier<? extends Collection<String>> names) {
        if (this.server != null) {
            return false;
        }
        this.server = server;
        // the rules' MBeans first: whoever sees the agent's MBean finds every rule's there too
        sync(names.get());
        register(agentName(), new StandardMBean(agent, AgentMBean.class, false));
        return true;
    }

    /**
     * As {@link #sync(Collection)}, with the names read under this registry's lock: of two syncs
     * racing (a reload's, and an inline rule's made under the book it replaced), the last one
     * then registers the newest names, where it could put back the names the reload removed
     * (review of attach and reload, thirty-fourth round).
     */
    public synchronized void sync(java.util.function.Supplier<? extends Collection<String>> names) {
        sync(names.get());
    }

    /** Makes the registered rule MBeans match {@code names}; nothing before {@link #attach}. */
    public synchronized void sync(Collection<String> names) {
        if (server == null) {
            return;
        }
        for (String name : names) {
            if (registered.add(name)) {
                register(ruleName(name), new StandardMBean(new RuleView(name), RuleMBean.class, false));
            }
        }
        for (String name : new HashSet<>(registered)) {
            if (!names.contains(name)) {
                registered.remove(name);
                try {
                    server.unregisterMBean(ruleName(name));
                } catch (JMException e) {
                    LOG.log(Level.DEBUG, () -> "rate-limit-agent: could not unregister the MBean of rule " + name);
                }
            }
        }
    }

    private void register(ObjectName name, StandardMBean bean) {
        try {
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(bean, name);
        } catch (JMException | SecurityException e) {
            LOG.log(Level.WARNING, "rate-limit-agent: could not register MBean " + name + ": " + e);
        }
    }

    static ObjectName agentName() {
        return name("dev.ratelimit:type=Agent");
    }

    /** {@code dev.ratelimit:type=Rule,name=RULE}, the name quoted only where JMX requires it. */
    public static ObjectName ruleName(String rule) {
        boolean plain = rule.chars().noneMatch(c -> ",=:\"*?\n".indexOf(c) >= 0);
        return name("dev.ratelimit:type=Rule,name=" + (plain ? rule : ObjectName.quote(rule)));
    }

    private static ObjectName name(String text) {
        try {
            return new ObjectName(text);
        } catch (JMException e) {
            throw new IllegalArgumentException(text, e);
        }
    }

    /** The metrics of the rule of one name in force now; zero once it is gone. */
    private final class RuleView implements RuleMBean {
        private final String name;

        RuleView(String name) {
            this.name = name;
        }

        private ActiveRule rule() {
            return rules.apply(name);
        }

        @Override
        public long getAllowed() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.metrics().allowed();
        }

        @Override
        public long getRejected() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.metrics().rejected();
        }

        @Override
        public long getExempted() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.metrics().exempted();
        }

        @Override
        public long getForgedTokens() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.metrics().forgedTokens();
        }

        @Override
        public long getStoreErrors() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.metrics().storeErrors();
        }

        @Override
        public long getPassedCommitted() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.metrics().passedCommitted();
        }

        @Override
        public long getTrackedKeys() {
            ActiveRule rule = rule();
            return rule == null ? 0 : rule.trackedKeys();
        }
    }
}
