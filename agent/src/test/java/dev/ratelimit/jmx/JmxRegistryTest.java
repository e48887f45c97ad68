package dev.ratelimit.jmx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** The registry registers nothing until it is given a server, then what is in force at that moment. */
class JmxRegistryTest {
    private static final AgentMBean AGENT = new AgentMBean() {
        @Override
        public String getVersion() {
            return "test";
        }

        @Override
        public String getConfigPath() {
            return "rules.yaml";
        }

        @Override
        public String getLastReloadTime() {
            return "";
        }

        @Override
        public String getLastReloadOutcome() {
            return "";
        }

        @Override
        public long getAgentErrors() {
            return 0;
        }

        @Override
        public long getTransformationErrors() {
            return 0;
        }

        @Override
        public long getInstrumentedClasses() {
            return 0;
        }

        @Override
        public String[] getRules() {
            return new String[0];
        }
    };

    private final JmxRegistry registry = new JmxRegistry(name -> null, AGENT);
    /** A server of its own: not the platform one, and not kept by MBeanServerFactory. */
    private final MBeanServer server = MBeanServerFactory.newMBeanServer();

    private Set<String> ruleBeans() throws Exception {
        Set<String> names = new TreeSet<>();
        for (ObjectName name : server.queryNames(new ObjectName("dev.ratelimit:type=Rule,*"), null)) {
            names.add(name.getKeyProperty("name"));
        }
        return names;
    }

    @Test
    void aSyncBeforeTheServerIsAttachedIsNotLostAndTheAttachRegistersTheRulesInForceThen() throws Exception {
        AtomicReference<List<String>> inForce = new AtomicReference<>(List.of("a", "b"));
        registry.sync(inForce.get());
        // a reload before anyone asked for the server: nothing to register on yet
        inForce.set(List.of("b", "c"));
        registry.sync(inForce.get());

        assertTrue(registry.attach(server, inForce::get));
        assertEquals(Set.of("b", "c"), ruleBeans());
        assertTrue(server.isRegistered(new ObjectName("dev.ratelimit:type=Agent")));
        assertEquals("rules.yaml", server.getAttribute(new ObjectName("dev.ratelimit:type=Agent"), "ConfigPath"));
        assertEquals(0L, server.getAttribute(JmxRegistry.ruleName("b"), "Allowed"), "a rule no longer in force reads 0");
    }

    /**
     * Whoever waits for the agent's MBean (a monitoring tool, the instrumented-call benchmark)
     * must find every rule's MBean there too: the agent's comes last. It came first, and the
     * benchmark once found no MBean for a rule.
     */
    @Test
    void theAgentsMBeanIsRegisteredAfterEveryRulesMBean() throws Exception {
        List<String> order = new java.util.ArrayList<>();
        server.addNotificationListener(javax.management.MBeanServerDelegate.DELEGATE_NAME, (notification, handback) -> {
            if (javax.management.MBeanServerNotification.REGISTRATION_NOTIFICATION.equals(notification.getType())) {
                ObjectName name = ((javax.management.MBeanServerNotification) notification).getMBeanName();
                if (name.getDomain().equals("dev.ratelimit")) {
                    order.add(name.getKeyProperty("type") + (name.getKeyProperty("name") == null ? ""
                            : ":" + name.getKeyProperty("name")));
                }
            }
        }, null, null);
        assertTrue(registry.attach(server, () -> List.of("a", "b")));
        assertEquals(3, order.size(), order::toString);
        assertEquals("Agent", order.get(2), order::toString);
    }

    @Test
    void onlyTheFirstServerIsAttachedAndLaterSyncsFollowTheRules() throws Exception {
        assertTrue(registry.attach(server, () -> List.of("a")));
        MBeanServer other = MBeanServerFactory.newMBeanServer();
        assertFalse(registry.attach(other, () -> List.of("x")));
        assertFalse(other.isRegistered(new ObjectName("dev.ratelimit:type=Agent")));

        registry.sync(List.of("a", "b"));
        assertEquals(Set.of("a", "b"), ruleBeans());
        registry.sync(List.of("b"));
        assertEquals(Set.of("b"), ruleBeans());
    }
}
