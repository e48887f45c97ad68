package dev.ratelimit.store;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.StoreConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Which edits of the {@code store} section a reload keeps the store through. */
class LimiterFactoryTest {

    private static StoreConfig store(String lines) throws Exception {
        return ConfigLoader.parse("version: 1\nstore:\n" + lines + "rules: []\n", "rules.yaml", Path.of("."), name -> null)
                .store();
    }

    private static final String REDIS = "  type: redis\n  redis:\n    uri: redis://127.0.0.1:1/0\n";

    /**
     * Editing {@code max-keys} (which Redis does not use) or the store's {@code on-error} (each
     * rule's default, which the rules carry) replaced the Redis pool: the new one was cold, and
     * under load its first calls missed their timeout and were decided by on-error.
     */
    @Test
    void aRedisStoreIsKeptThroughEditsThatDoNotConcernIt() throws Exception {
        try (LimiterFactory current = LimiterFactory.of(store(REDIS + "  max-keys: 1000\n  on-error: allow\n"))) {
            assertSame(current, LimiterFactory.forReload(current, store(REDIS + "  max-keys: 2000\n  on-error: allow\n")));
            assertSame(current, LimiterFactory.forReload(current, store(REDIS + "  max-keys: 1000\n  on-error: reject\n")));
            try (LimiterFactory other = LimiterFactory.forReload(current,
                    store("  type: redis\n  redis:\n    uri: redis://127.0.0.1:2/0\n  max-keys: 1000\n  on-error: allow\n"))) {
                assertNotSame(current, other);
            }
            try (LimiterFactory timeout = LimiterFactory.forReload(current,
                    store(REDIS + "    timeout: 80ms\n  max-keys: 1000\n  on-error: allow\n"))) {
                assertNotSame(current, timeout);
            }
            try (LimiterFactory local = LimiterFactory.forReload(current, store("  type: local\n  max-keys: 1000\n"))) {
                assertNotSame(current, local);
            }
        }
    }

    /** The local store's counters are bounded by its max-keys: a new bound is a new store; on-error changes nothing there. */
    @Test
    void aLocalStoreIsKeptUnlessItsMaxKeysChange() throws Exception {
        try (LimiterFactory current = LimiterFactory.of(store("  type: local\n  max-keys: 1000\n"))) {
            assertSame(current, LimiterFactory.forReload(current, store("  type: local\n  max-keys: 1000\n  on-error: reject\n")));
            try (LimiterFactory raised = LimiterFactory.forReload(current, store("  type: local\n  max-keys: 2000\n"))) {
                assertNotSame(current, raised);
            }
        }
    }
}
