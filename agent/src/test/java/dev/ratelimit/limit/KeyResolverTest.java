package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.KeySpec;
import org.junit.jupiter.api.Test;

class KeyResolverTest {

    record Account(String id, Profile profile) {
    }

    static final class Profile {
        private final String region;
        private final boolean active;

        Profile(String region, boolean active) {
            this.region = region;
            this.active = active;
        }

        public boolean isActive() {
            return active;
        }
    }

    static final class User {
        public String getName() {
            return "ann";
        }
    }

    private static String key(String spec, Object... args) {
        return KeyResolver.of(KeySpec.parse(spec)).resolve(args, null);
    }

    @Test
    void plainArgument() {
        assertEquals("42", key("arg0", 42));
        assertEquals("b", key("arg1", "a", "b"));
        assertEquals("RED", key("arg0", Color.RED));
    }

    enum Color { RED }

    /**
     * An array keys by its contents, an Optional by its value: their toString named the instance,
     * so each call's new array was a new key and the rule never limited anyone.
     */
    @Test
    void arraysAndOptionalsKeyByWhatTheyHold() {
        assertEquals("ann", key("arg0", (Object) "ann".toCharArray()));
        assertEquals(key("arg0", (Object) new byte[] {1, 2}), key("arg0", (Object) new byte[] {1, 2}));
        assertEquals("[1, 2]", key("arg0", (Object) new int[] {1, 2}));
        assertEquals("[a, [b]]", key("arg0", (Object) new Object[] {"a", new String[] {"b"}}));
        assertEquals("ann", key("arg0", java.util.Optional.of("ann")));
        assertEquals("-", key("arg0", java.util.Optional.empty()));
    }

    @Test
    void gettersRecordAccessorsAndFields() {
        assertEquals("ann", key("arg0.name", new User()));
        Account account = new Account("a-1", new Profile("eu", true));
        assertEquals("a-1", key("arg0.id", account));
        assertEquals("eu", key("arg0.profile.region", account));
        assertEquals("true", key("arg0.profile.active", account));
    }

    /**
     * A getter of a class that cannot be reached (not public, or in a package its module does
     * not export) is called as its public, exported supertype declares it. The entries of
     * Map.of (java.util.KeyValueHolder) and unmodifiable lists once failed every call: the rule
     * was dead, and each call counted as an agent error.
     */
    @Test
    void gettersOfUnreachableClassesAreCalledThroughTheirPublicSupertypes() {
        assertEquals("ann", key("arg0.key", java.util.Map.entry("ann", 1)));
        assertEquals("1", key("arg0.value", java.util.Map.of("ann", 1).entrySet().iterator().next()));
        assertEquals("true", key("arg0.empty", java.util.Collections.unmodifiableList(java.util.List.of())));
        assertEquals("2", key("arg0.size", java.util.List.of("a", "b")));
    }

    @Test
    void nullAnywhereIsTheDashKey() {
        assertEquals("-", key("arg0", (Object) null));
        assertEquals("-", key("arg0.profile.region", new Account("a", null)));
    }

    @Test
    void listsAreJoinedWithoutCollisions() {
        assertNotEquals(key("arg0, arg1", "a:b", "c"), key("arg0, arg1", "a", "b:c"));
        assertNotEquals(key("arg0, arg1", "1:a", "b"), key("arg0, arg1", "1", "a1:b"));
        assertEquals(key("arg0, arg1", "x", "y"), key("arg0, arg1", "x", "y"));
    }

    @Test
    void requestKeysOutsideARequestAreTheDashKey() {
        assertEquals("-", key("client-ip"));
        assertEquals("-", key("header:X-Tenant"));
        assertEquals("-", key("principal"));
    }

    @Test
    void hugeKeysAreHashedAndStayDistinct() {
        String a = "a".repeat(1_000_000);
        String b = "a".repeat(999_999) + "b";
        String keyA = key("arg0", a);
        assertTrue(keyA.startsWith("sha256:") && keyA.length() == 71, keyA.length() + "");
        assertNotEquals(keyA, key("arg0", b));
    }

    @Test
    void aShortKeyCannotPoseAsTheHashOfALongOne() {
        String longKey = "victim-".repeat(100);
        String hashed = key("arg0", longKey);
        assertNotEquals(hashed, key("arg0", hashed), "a key spelled like a hash is hashed again");
    }

    @Test
    void aMissingPropertyIsAnErrorTheBridgeCountsNotASilentKey() {
        assertThrows(IllegalStateException.class, () -> key("arg0.nope", new User()));
    }

    /** Each call of a method keyed on a property its argument lacks once searched the class again. */
    @Test
    void aMissingPropertyIsLookedUpOncePerClass() {
        PropertyPath path = PropertyPath.of(java.util.List.of("nope"));
        for (int i = 0; i < 5; i++) {
            IllegalStateException missing = assertThrows(IllegalStateException.class, () -> path.read(new User()));
            assertTrue(missing.getMessage().contains("no property 'nope'"), missing.getMessage());
        }
        assertEquals(1, path.step(0).lookups);
        assertEquals("ann", PropertyPath.of(java.util.List.of("name")).read(new User()));
    }
}
