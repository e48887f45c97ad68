package dev.ratelimit.limit;

import dev.ratelimit.Hex;
import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.config.KeyPart;
import dev.ratelimit.config.KeySpec;
import dev.ratelimit.config.TokenSource;
import java.lang.reflect.Array;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * Turns a call into the key it is counted under, as the rule's {@code key:} says.
 *
 * <p>A missing value ({@code null} argument or property, missing header, no principal, no
 * current request) is the key {@code -}. Several parts are joined with their lengths, so no
 * choice of values can make two different tuples the same key. Keys longer than
 * {@value #MAX_KEY_LENGTH} characters are replaced by their SHA-256, so a huge argument cannot
 * make the store hold a huge string, and distinct values stay distinct. Keys that already start
 * with {@value #HASHED} are hashed too, so no short key can pose as the hash of a long one, and
 * so are keys that hold a lone surrogate (see {@link #wellFormed}).
 */
public final class KeyResolver {
    static final String MISSING = "-";
    static final int MAX_KEY_LENGTH = 256;
    static final String HASHED = "sha256:";

    private final Part[] parts;
    private final boolean usesArguments;

    private KeyResolver(Part[] parts, boolean usesArguments) {
        this.parts = parts;
        this.usesArguments = usesArguments;
    }

    /** The resolver for a key spec. */
    public static KeyResolver of(KeySpec spec) {
        List<KeyPart> specParts = spec.parts();
        Part[] parts = new Part[specParts.size()];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = part(specParts.get(i));
        }
        return new KeyResolver(parts, spec.usesArguments());
    }

    private static Part part(KeyPart part) {
        switch (part.kind()) {
            case CLIENT_IP:
                return (args, request) -> request == null ? null : request.clientIp();
            case PRINCIPAL:
                return (args, request) -> {
                    if (request == null) {
                        return null;
                    }
                    // the application's Principal.getName: the agent's call, as for an argument's property
                    RequestContext.Slot slot = RequestContext.slot();
                    boolean reading = slot.readingKey;
                    slot.readingKey = true;
                    try {
                        return request.principal();
                    } finally {
                        slot.readingKey = reading;
                    }
                };
            case HEADER: {
                String name = part.headerName();
                return (args, request) -> request == null ? null : request.header(name);
            }
            case ARGUMENT: {
                int index = part.argumentIndex();
                PropertyPath path = PropertyPath.of(part.propertyPath());
                return (args, request) -> {
                    if (args == null || index >= args.length) {
                        throw new KeyUnreadableException("argument " + index, "the key names argument " + index
                                + " but the method has " + (args == null ? 0 : args.length));
                    }
                    Object root = args[index];
                    if (root == null || (root instanceof String && path.isEmpty())) {
                        return (String) root; // no application code runs: the common arg0 on a String
                    }
                    if (path.isEmpty() && (root instanceof Long || root instanceof Integer
                            || root instanceof java.util.UUID || root instanceof Enum)) {
                        // nor here (final classes' toString, Enum's final name()): the common ids
                        // skip the second thread-local look-up and the flag's try/finally
                        return text(root);
                    }
                    // The getters and toString a key reads are the agent's calls, not the
                    // application's: a limited method among them (a rule naming Order#getId beside
                    // one keyed arg0.id) is not counted while the thread reads a key. It was: the
                    // reads spent its budget, and once spent its rejection made the keyed rule let
                    // every call through as an agent error.
                    RequestContext.Slot slot = RequestContext.slot();
                    boolean reading = slot.readingKey;
                    slot.readingKey = true;
                    try {
                        Object value = path.read(root);
                        try {
                            return value == null ? null : text(value);
                        } catch (RuntimeException | Error e) {
                            throw ThrownByApplication.report("the key's " + value.getClass().getName()
                                    + (value instanceof List ? ".toArray() or an element's toString()" : ".toString()"), e);
                        }
                    } finally {
                        slot.readingKey = reading;
                    }
                };
            }
            default:
                return (args, request) -> "*";
        }
    }

    /**
     * A key part's text; {@code null} for none. An array or a {@code List} keys by its contents
     * and an {@code Optional} by its value: their {@code toString} names the instance ({@code [C@1b6d3586})
     * or wraps the value, so each call's new array was a new key and the rule never limited.
     */
    private static String text(Object value) {
        if (value instanceof String) {
            return (String) value;
        }
        if (value instanceof Enum) {
            return ((Enum<?>) value).name();
        }
        if (value instanceof Optional) {
            return ((Optional<?>) value).map(KeyResolver::text).orElse(null);
        }
        if (value instanceof char[]) {
            return new String((char[]) value);
        }
        if (value instanceof Object[] || value instanceof List) {
            StringBuilder text = new StringBuilder();
            elements(value, text, null);
            return text.toString();
        }
        if (value.getClass().isArray()) {
            StringBuilder text = new StringBuilder("[");
            for (int i = 0, length = Array.getLength(value); i < length; i++) {
                text.append(i == 0 ? "" : ", ").append(Array.get(value, i));
            }
            return text.append(']').toString();
        }
        if (value instanceof Long || value instanceof Integer || value instanceof java.util.UUID) {
            // the common keys besides String: their toString is their own, no need to ask
            return value.toString();
        }
        if (!OWN_TO_STRING.get(value.getClass())) {
            warnIdentityKey(value.getClass());
        }
        return String.valueOf(value);
    }

    /**
     * An {@code Object[]}'s or a {@code List}'s contents, each element with its length before it,
     * then {@code :} ({@code ;} for an array or a list; {@code null} and an empty {@code Optional} as
     * {@code n}, another {@code Optional} as its value): {@code ["a, b"]} and {@code ["a", "b"]} are
     * two keys. Written as {@code Arrays.deepToString} writes them, they were one ({@code [a, b]}), and
     * one caller of a varargs method used up another's budget (the review of the method path,
     * thirty-sixth round); a list's {@code toString} wrote them so too, until the thirty-seventh. An
     * array or list met again inside itself is written {@code c}, where those wrote {@code [...]} or
     * {@code (this Collection)}. A list is read by its {@code toArray}, one copy, as a list
     * modified meanwhile is read by its {@code toString}.
     */
    private static void elements(Object container, StringBuilder text, java.util.Map<Object, Boolean> open) {
        Object[] array = container instanceof List ? ((List<?>) container).toArray() : (Object[]) container;
        text.append('[');
        for (int i = 0; i < array.length; i++) {
            Object element = array[i];
            // an Optional is its value here too, read here: an array inside it is an array
            // element, and one holding the array that holds it is a cycle (an Optional cannot
            // hold itself: the loop ends)
            while (element instanceof Optional) {
                element = ((Optional<?>) element).orElse(null);
            }
            text.append(i == 0 ? "" : ",");
            if (element == null) {
                text.append('n');
                continue;
            }
            String part;
            char kind = ':';
            if (element instanceof Object[] || element instanceof List) {
                if (open == null) {
                    // the arrays and lists being written, from the outermost: made at the first one inside one
                    open = new java.util.IdentityHashMap<>();
                    open.put(container, Boolean.TRUE);
                }
                if (open.containsKey(element)) {
                    // the array inside itself: no length, as null has none
                    text.append('c');
                    continue;
                }
                open.put(element, Boolean.TRUE);
                StringBuilder inner = new StringBuilder();
                elements(element, inner, open);
                open.remove(element);
                part = inner.toString();
                kind = ';';
            } else {
                part = text(element);
                if (element.getClass().isArray() && !(element instanceof char[])) {
                    // an array's text, not a string that reads the same (a char[] is the string it holds)
                    kind = ';';
                }
            }
            text.append(part.length()).append(kind).append(part);
        }
        text.append(']');
    }

    /**
     * Whether a class has a {@code toString} of its own, or of a superclass other than
     * {@code Object}: asked once per class. Whatever the question throws is taken for yes, with
     * nothing said: listing a class's methods resolves every type they name, and a method naming
     * a class its loader cannot find (an optional dependency) threw NoClassDefFoundError, which a
     * ClassValue does not keep, so every call asked again and failed, and the rule limited no one
     * (review of the twenty-third round).
     */
    private static final ClassValue<Boolean> OWN_TO_STRING = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            try {
                return type.getMethod("toString").getDeclaringClass() != Object.class;
            } catch (NoSuchMethodException | RuntimeException | LinkageError e) {
                return true;
            }
        }
    };

    /** Classes already named by {@link #warnIdentityKey}, bounded. */
    private static final java.util.Set<String> WARNED_IDENTITY = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A key value whose {@code toString} is {@code Object}'s names the instance
     * ({@code com.acme.User@1b6d3586}): each call's new object is a key of its own, and the rule
     * limits no one, silently (review of the twenty-third round). Said once per class, by its
     * name only; the call is still counted under that key.
     */
    private static void warnIdentityKey(Class<?> type) {
        if (WARNED_IDENTITY.size() < 64 && WARNED_IDENTITY.add(type.getName())) {
            System.getLogger("dev.ratelimit").log(System.Logger.Level.WARNING,
                    "rate-limit-agent: a rule's key is a " + type.getName() + ", whose toString is Object's: each"
                            + " instance is a key of its own, so the rule limits each object, not each caller;"
                            + " key by one of its properties (arg0.id) or give it a toString");
        }
    }

    /** Whether the key reads the method's arguments (the advice must pass them). */
    public boolean usesArguments() {
        return usesArguments;
    }

    /** The key of a call with these arguments, made while serving {@code request} (or none). */
    public String resolve(Object[] arguments, RequestKeys request) {
        if (parts.length == 1) {
            return bounded(orMissing(parts[0].value(arguments, request)));
        }
        StringBuilder key = new StringBuilder();
        for (Part part : parts) {
            String value = orMissing(part.value(arguments, request));
            key.append(value.length()).append(':').append(value);
        }
        return bounded(key.toString());
    }

    private static String orMissing(String value) {
        return value == null ? MISSING : value;
    }

    private static String bounded(String key) {
        if (key.length() <= MAX_KEY_LENGTH && !key.startsWith(HASHED) && wellFormed(key)) {
            return key;
        }
        return HASHED + Hex.of(TokenSource.sha256(bytesOf(key)));
    }

    /**
     * Whether the key holds no lone surrogate (a string can hold one: half of an emoji cut in
     * two, say). Redis clients send a key as the JDK's UTF-8, which writes {@code ?} for each, so
     * {@code "a\uD800"}, {@code "a\uDC00"} and {@code "a?"} would be one key in Redis; such a key is
     * counted by its hash, of {@link #bytesOf its bytes}.
     */
    static boolean wellFormed(String key) {
        // the common key holds no surrogate at all: one mask test per character
        for (int i = 0; i < key.length(); i++) {
            if ((key.charAt(i) & 0xF800) == 0xD800) {
                return pairedFrom(key, i);
            }
        }
        return true;
    }

    private static boolean pairedFrom(String key, int from) {
        for (int i = from; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The key's UTF-8, except that a lone surrogate is written as its own three bytes, as WTF-8
     * does, where the JDK's encoder writes {@code ?}: two keys that differ only there hash apart.
     * Well-formed keys encode as UTF-8, so their hashes are what they were.
     */
    static byte[] bytesOf(String key) {
        if (wellFormed(key)) {
            return key.getBytes(StandardCharsets.UTF_8);
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < key.length(); ) {
            int codePoint = key.codePointAt(i);
            if (Character.isSurrogate((char) codePoint) && codePoint < Character.MIN_SUPPLEMENTARY_CODE_POINT) {
                out.write(0xE0 | (codePoint >> 12));
                out.write(0x80 | ((codePoint >> 6) & 0x3F));
                out.write(0x80 | (codePoint & 0x3F));
            } else {
                out.writeBytes(new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8));
            }
            i += Character.charCount(codePoint);
        }
        return out.toByteArray();
    }

    @FunctionalInterface
    private interface Part {
        String value(Object[] arguments, RequestKeys request);
    }
}
