package dev.ratelimit.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.config.KeySpec;
import java.util.List;
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

    /** Stands for an optional dependency the loader of {@link UserId} cannot find. */
    public static final class MissingDependency {
    }

    /** A key value with its own toString and a public method naming a type its loader cannot find. */
    public static final class UserId {
        public MissingDependency audit() {
            return null;
        }

        @Override
        public String toString() {
            return "ann";
        }
    }

    /**
     * Listing the methods of such a class throws NoClassDefFoundError: the question whether its
     * toString is Object's failed on every call, and the key with it, so the rule limited no one
     * (review of the twenty-third round's warning). Its own toString is the key, with no warning.
     */
    @Test
    void aKeyWhoseMethodsCannotBeListedIsStillItsToString() throws Exception {
        Object user = definedWithout(UserId.class, MissingDependency.class).getDeclaredConstructor().newInstance();
        assertThrows(NoClassDefFoundError.class, () -> user.getClass().getMethods(), "the case under test");
        try (dev.ratelimit.testing.LogCapture log = dev.ratelimit.testing.LogCapture.open()) {
            for (int i = 0; i < 3; i++) {
                assertEquals("ann", key("arg0", user));
            }
            assertEquals(java.util.List.of(), log.messages());
        }
    }

    /** A key value with Object's toString. */
    static final class Caller {
    }

    /**
     * A key value whose toString is Object's made every call a key of its own, so the rule never
     * limited, and nothing said so (review): now a warning names the class, once.
     */
    @Test
    void aKeyWhoseToStringIsObjectsIsWarnedOfOnce() {
        try (dev.ratelimit.testing.LogCapture log = dev.ratelimit.testing.LogCapture.open()) {
            assertNotEquals(key("arg0", new Caller()), key("arg0", new Caller()));
            java.util.List<String> warnings = log.messages(java.util.logging.Level.WARNING);
            assertEquals(1, warnings.size(), warnings::toString);
            assertTrue(warnings.get(0).contains(Caller.class.getName() + ", whose toString is Object's"), warnings.get(0));
            key("arg0", 42);
            key("arg0", Color.RED);
            key("arg0", new Account("a", null));
            assertEquals(1, log.messages(java.util.logging.Level.WARNING).size(), "values with a toString of their own");
        }
    }

    /**
     * An array keys by its contents, an Optional by its value: their toString named the instance,
     * so each call's new array was a new key and the rule never limited anyone.
     */
    @Test
    void arraysAndOptionalsKeyByWhatTheyHold() {
        assertEquals("ann", key("arg0", (Object) "ann".toCharArray()));
        assertEquals(key("arg0", (Object) new byte[] {1, 2}), key("arg0", (Object) new byte[] {1, 2}));
        assertEquals("[1, 2]", key("arg0", (Object) new int[] {1, 2}));
        assertEquals("[1:a,5;[1:b]]", key("arg0", (Object) new Object[] {"a", new String[] {"b"}}));
        assertEquals("ann", key("arg0", java.util.Optional.of("ann")));
        assertEquals("-", key("arg0", java.util.Optional.empty()));
    }

    /**
     * Arrays of objects with different contents are different keys: written as
     * Arrays.deepToString writes them, ["a, b"] and ["a", "b"] were one key, and one caller of a
     * varargs method used up another's budget (the review of the method path, thirty-sixth round).
     */
    @Test
    void arraysOfObjectsThatDifferAreDifferentKeys() {
        List<Object[]> arrays = List.of(
                new String[] {"a, b"},
                new String[] {"a", "b"},
                new String[] {"a,1:b"},
                new Object[] {"a", null},
                new Object[] {"a", "null"},
                new Object[] {"a", "n"},
                new Object[] {"a", "-"},
                new Object[] {"a", new String[] {"b"}},
                new Object[] {"a", "[b]"},
                new Object[] {"a", "[1:b]"},
                new Object[] {new Object[] {"a", "b"}},
                new Object[] {new Object[] {"a"}, "b"},
                new Object[] {},
                new Object[] {""},
                new Object[] {null},
                new Object[] {"", ""},
                new Object[] {new int[] {1, 2}},
                new Object[] {"[1, 2]"},
                new Object[] {"[1, 2]", ""},
                new Object[] {java.util.Optional.of(new String[] {"a"})},
                new Object[] {"[1:a]"});
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (Object[] array : arrays) {
            assertTrue(keys.add(key("arg0", (Object) array)), () -> "a second array keyed " + key("arg0", (Object) array));
        }
        assertEquals(key("arg0", (Object) new String[] {"a", "b"}), key("arg0", (Object) new Object[] {"a", "b"}),
                "the same contents, whatever the array's type");
        assertEquals(key("arg0", (Object) new Object[] {"ann"}), key("arg0", (Object) new Object[] {"ann".toCharArray()}),
                "a char[] is the string it holds, inside an array too");
        Object[] cyclic = new Object[2];
        cyclic[0] = "a";
        cyclic[1] = cyclic;
        assertEquals("[1:a,c]", key("arg0", (Object) cyclic));
        Object[] throughOptional = new Object[1];
        throughOptional[0] = java.util.Optional.of(throughOptional);
        assertEquals("[c]", key("arg0", (Object) throughOptional), "a cycle through an Optional");
        assertEquals("[c]", key("arg0", java.util.Optional.of(throughOptional)));
        assertEquals("[n,1:a]", key("arg0", (Object) new Object[] {java.util.Optional.empty(), java.util.Optional.of("a")}));
        assertNotEquals(key("arg0", (Object) cyclic), key("arg0", (Object) new Object[] {"a", "c"}));
    }

    /**
     * A list keys by its elements, as an array does: by its toString, List.of("a, b") and
     * List.of("a", "b") were one key, [a, b] (the review of the method path, thirty-sixth round).
     */
    @Test
    void listsThatDifferAreDifferentKeys() {
        List<Object> lists = List.of(
                List.of("a, b"),
                List.of("a", "b"),
                List.of("a", List.of("b")),
                List.of("a", "[b]"),
                List.of(List.of("a", "b")),
                List.of(),
                List.of(""),
                java.util.Arrays.asList("a", null),
                List.of("a", "null"),
                List.of(java.util.Optional.of(List.of("a"))),
                List.of("[1:a]"));
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (Object list : lists) {
            assertTrue(keys.add(key("arg0", list)), () -> "a second list keyed " + key("arg0", list));
        }
        assertEquals("[1:a,1:b]", key("arg0", List.of("a", "b")));
        assertEquals(key("arg0", (Object) new String[] {"a", "b"}), key("arg0", new java.util.ArrayList<>(List.of("a", "b"))),
                "the same elements, in an array or in any list");
        assertEquals(key("arg0", (Object) new Object[] {"a", new String[] {"b"}}), key("arg0", List.of("a", List.of("b"))),
                "a list inside a list reads as an array inside an array");
        java.util.List<Object> cyclic = new java.util.ArrayList<>();
        cyclic.add("a");
        cyclic.add(cyclic);
        assertEquals("[1:a,c]", key("arg0", cyclic), "a list inside itself");
        Object[] holder = {"a", null};
        java.util.List<Object> inner = new java.util.ArrayList<>(List.of("b"));
        inner.add(holder);
        holder[1] = inner;
        assertEquals("[1:a,7;[1:b,c]]", key("arg0", (Object) holder), "an array inside a list inside it");
    }

    /** A list whose elements cannot be read: its toArray throws, as a list of a closed session's can. */
    @Test
    void aListThatCannotBeReadIsNamedWithoutItsMessage() {
        List<String> closed = new java.util.AbstractList<>() {
            @Override
            public String get(int index) {
                throw new IllegalStateException("session closed for secret-user-bad3");
            }

            @Override
            public int size() {
                return 1;
            }
        };
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> key("arg0.items", new Basket(closed)));
        assertTrue(thrown.getMessage().contains(".toArray() or an element's toString() threw"), thrown.getMessage());
        assertFalse(asLogged(thrown).contains("secret-"), asLogged(thrown));
    }

    /** An argument holding a list. */
    public static final class Basket {
        private final List<String> items;

        Basket(List<String> items) {
            this.items = items;
        }

        public List<String> getItems() {
            return items;
        }
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
        // the SHA-256 of its UTF-8 bytes in lower-case hex (head -c 1000000 /dev/zero | tr '\0' a | sha256sum)
        assertEquals("sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", keyA);
        assertNotEquals(keyA, key("arg0", b));
    }

    /**
     * A long key is hashed from its bytes; encoding it as the JDK's UTF-8 wrote each lone
     * surrogate as '?', so these three keys shared one hash, and one budget. A short key goes to
     * Redis as the client's UTF-8, with the same '?': one with a lone surrogate is hashed too.
     */
    @Test
    void keysThatDifferOnlyInALoneSurrogateStayApart() {
        assertEquals("a?", key("arg0", "a?"));
        assertEquals("caf\u00e9 \uD83D\uDE00", key("arg0", "caf\u00e9 \uD83D\uDE00"), "a well-formed key is kept");
        String shortHigh = key("arg0", "a\uD800");
        String shortLow = key("arg0", "a\uDC00");
        assertTrue(shortHigh.startsWith("sha256:") && shortLow.startsWith("sha256:"), shortHigh + " " + shortLow);
        assertNotEquals(shortHigh, shortLow);
        assertTrue(key("arg0", "\uDC00\uD800").startsWith("sha256:"), "a low surrogate before a high one is no pair");

        String prefix = "x".repeat(300);
        String high = key("arg0", prefix + "\uD800");
        String low = key("arg0", prefix + "\uDC00");
        String question = key("arg0", prefix + "?");
        assertTrue(high.startsWith("sha256:"), high);
        assertEquals(3, new java.util.HashSet<>(java.util.List.of(high, low, question)).size(), "three keys, three hashes");
        assertNotEquals(key("arg0", prefix + "\uD800\uD800"), key("arg0", prefix + "\uDBFF\uD800"));
        // a well-formed key hashes as before (its UTF-8), an emoji's surrogate pair included
        String wellFormed = prefix + "caf\u00e9 \uD83D\uDE00";
        assertTrue(java.util.Arrays.equals(wellFormed.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                KeyResolver.bytesOf(wellFormed)));
        // the generalized UTF-8 of a lone surrogate: three bytes no well-formed key's UTF-8 holds
        assertTrue(java.util.Arrays.equals(new byte[] {'a', (byte) 0xED, (byte) 0xA0, (byte) 0x80, 'b'},
                KeyResolver.bytesOf("a\uD800b")));
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

    /** A getter that throws: the agent logs this message, so it names the exception's class, not its text. */
    public static final class Leaky {
        public String getId() {
            throw new IllegalArgumentException("lookup failed for secret-user-bad3");
        }
    }

    /** Its {@code toString} throws, as {@link Leaky#getId} does. */
    public static final class LeakyKey {
        @Override
        public String toString() {
            throw new IllegalStateException("no name for secret-user-bad3", new RuntimeException("secret-token-0123"));
        }
    }

    /**
     * What the agent logs of an error it reports: the message, and the causes' messages, which
     * a log formatter prints too. The cause was once attached, and its line printed the user id.
     */
    private static String asLogged(Throwable thrown) {
        java.io.StringWriter text = new java.io.StringWriter();
        thrown.printStackTrace(new java.io.PrintWriter(text));
        return text.toString();
    }

    @Test
    void aGetterThatThrowsIsNamedWithoutItsMessage() {
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> PropertyPath.of(java.util.List.of("id")).read(new Leaky()));
        assertTrue(thrown.getMessage().contains("threw java.lang.IllegalArgumentException"), thrown.getMessage());
        assertFalse(asLogged(thrown).contains("secret-user"), asLogged(thrown));
        assertEquals("getId", thrown.getStackTrace()[0].getMethodName(), "where it was thrown is kept");
    }

    @Test
    void aKeyWhoseToStringThrowsIsNamedWithoutItsMessage() {
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> key("arg0", new LeakyKey()));
        assertTrue(thrown.getMessage().contains(LeakyKey.class.getName() + ".toString() threw"), thrown.getMessage());
        assertFalse(asLogged(thrown).contains("secret-"), asLogged(thrown));
    }

    /** Each call of a method keyed on a property its argument lacks once searched the class again. */
    @Test
    void aMissingPropertyIsLookedUpOncePerClass() {
        PropertyPath path = PropertyPath.of(java.util.List.of("nope"));
        for (int i = 0; i < 5; i++) {
            KeyUnreadableException missing = assertThrows(KeyUnreadableException.class, () -> path.read(new User()));
            assertTrue(missing.getMessage().contains("no property 'nope'"), missing.getMessage());
        }
        assertEquals(1, path.step(0).lookups);
        assertEquals("ann", PropertyPath.of(java.util.List.of("name")).read(new User()));
    }

    /** A type that {@link #classWithAnUnresolvableMethod} leaves out of its loader. */
    public static final class Absent {
    }

    /** Its methods cannot be listed in a loader without {@link Absent}. */
    public static final class NamesAbsent {
        public Absent getThing() {
            return null;
        }

        public String getName() {
            return "ann";
        }
    }

    /** {@link NamesAbsent} defined again in a loader that cannot find {@link Absent}. */
    private static Class<?> classWithAnUnresolvableMethod() throws Exception {
        return definedWithout(NamesAbsent.class, Absent.class);
    }

    /** {@code type} defined again, from its class file, in a loader that cannot find {@code hidden}. */
    private static Class<?> definedWithout(Class<?> type, Class<?> hidden) throws Exception {
        String wanted = type.getName();
        String missing = hidden.getName();
        ClassLoader loader = new ClassLoader(KeyResolverTest.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                synchronized (getClassLoadingLock(name)) {
                    if (name.equals(missing)) {
                        throw new ClassNotFoundException(name);
                    }
                    if (name.equals(wanted)) {
                        Class<?> known = findLoadedClass(name);
                        if (known != null) {
                            return known;
                        }
                        try (java.io.InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                            byte[] bytes = in.readAllBytes();
                            return defineClass(name, bytes, 0, bytes.length);
                        } catch (java.io.IOException e) {
                            throw new ClassNotFoundException(name, e);
                        }
                    }
                    return super.loadClass(name, resolve);
                }
            }
        };
        return Class.forName(wanted, true, loader);
    }

    /**
     * Listing the methods of a class that names a type its loader cannot find throws
     * NoClassDefFoundError, which the lookup did not cache: each call searched the class again.
     */
    @Test
    void aClassWhoseMethodsCannotBeListedIsLookedUpOnce() throws Exception {
        Class<?> type = classWithAnUnresolvableMethod();
        assertThrows(NoClassDefFoundError.class, type::getDeclaredMethods, "the loader must hide Absent");
        Object instance = type.getDeclaredConstructor().newInstance();
        PropertyPath path = PropertyPath.of(java.util.List.of("name"));
        for (int i = 0; i < 5; i++) {
            KeyUnreadableException failed = assertThrows(KeyUnreadableException.class, () -> path.read(instance));
            assertTrue(failed.getMessage().contains("cannot be looked up"), failed.getMessage());
        }
        assertEquals(1, path.step(0).lookups);
    }
}
