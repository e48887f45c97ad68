package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The bounded key store reads present keys quietly and records their use only now and then: a
 * key in use must still never expire, and an idle one must.
 */
class KeyStoreTest {

    @Test
    void aKeyInUseKeepsItsStateFarBeyondTheRetention() throws Exception {
        AtomicInteger created = new AtomicInteger();
        KeyStore store = KeyStore.local(1000, 20, exhausted -> {
            created.incrementAndGet();
            return new Object[] {new Object()};
        });
        Object[] first = store.state("k");
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
        while (System.nanoTime() < end) {
            // twenty retentions, one call every millisecond or so
            assertSame(first, store.state("k"));
            Thread.sleep(1);
        }
        assertEquals(1, created.get());
    }

    @Test
    void anIdleKeyExpiresAfterItsRetention() throws Exception {
        KeyStore store = KeyStore.local(1000, 20, exhausted -> new Object[] {new Object()});
        Object[] first = store.state("k");
        assertSame(first, store.state("k"));
        Thread.sleep(120);
        assertEquals(0, store.size(), "expired and removed");
        assertNotSame(first, store.state("k"));
    }
}
