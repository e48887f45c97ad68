package dev.ratelimit.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One element of a rule's key: what a call is counted by. */
public final class KeyPart {

    /** The sources a key part can take its value from. */
    public enum Kind {
        /** One counter for every caller. */
        GLOBAL,
        /** The client's address, resolved through trusted proxies. */
        CLIENT_IP,
        /** The servlet request's user principal name. */
        PRINCIPAL,
        /** A request header's value. */
        HEADER,
        /** A method argument, or a property of it. */
        ARGUMENT
    }

    /** The JVM allows at most 255 parameter slots, so 254 is the highest index worth naming. */
    static final int MAX_ARGUMENT_INDEX = 254;

    private static final Pattern ARGUMENT = Pattern.compile("arg(0|[1-9][0-9]{0,2})((?:\\.[^.]*)*)");
    private static final String ACCEPTED =
            "expected global, client-ip, principal, header:NAME, argN or argN.property";

    private final Kind kind;
    private final String headerName;
    private final int argumentIndex;
    private final List<String> propertyPath;

    private KeyPart(Kind kind, String headerName, int argumentIndex, List<String> propertyPath) {
        this.kind = kind;
        this.headerName = headerName;
        this.argumentIndex = argumentIndex;
        this.propertyPath = propertyPath;
    }

    /**
     * Parses one key: {@code global}, {@code client-ip}, {@code principal}, {@code header:NAME},
     * {@code argN} or {@code argN.prop.prop}.
     *
     * @throws IllegalArgumentException with a message for the user
     */
    public static KeyPart parse(String text) {
        switch (text) {
            case "global":
                return new KeyPart(Kind.GLOBAL, null, -1, List.of());
            case "client-ip":
                return new KeyPart(Kind.CLIENT_IP, null, -1, List.of());
            case "principal":
                return new KeyPart(Kind.PRINCIPAL, null, -1, List.of());
            default:
                break;
        }
        if (text.startsWith("header:")) {
            String name = text.substring("header:".length());
            if (!HttpTokens.isToken(name)) {
                throw new IllegalArgumentException("invalid key " + NodeReader.quoted(text)
                        + ": the header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)");
            }
            return new KeyPart(Kind.HEADER, name, -1, List.of());
        }
        Matcher matcher = ARGUMENT.matcher(text);
        if (matcher.matches()) {
            int index = Integer.parseInt(matcher.group(1));
            if (index > MAX_ARGUMENT_INDEX) {
                throw new IllegalArgumentException("invalid key " + NodeReader.quoted(text)
                        + ": a method has at most 255 parameters, so argN goes from arg0 to arg254");
            }
            List<String> path = new ArrayList<>();
            String properties = matcher.group(2);
            if (!properties.isEmpty()) {
                for (String property : properties.substring(1).split("\\.", -1)) {
                    if (!isJavaIdentifier(property)) {
                        throw new IllegalArgumentException("invalid key " + NodeReader.quoted(text)
                                + ": each property after argN must be a Java identifier, as in arg0.userId");
                    }
                    path.add(property);
                }
            }
            return new KeyPart(Kind.ARGUMENT, null, index, Collections.unmodifiableList(path));
        }
        throw new IllegalArgumentException("invalid key " + NodeReader.quoted(text) + "; " + ACCEPTED);
    }

    private static boolean isJavaIdentifier(String text) {
        if (text.isEmpty() || !Character.isJavaIdentifierStart(text.codePointAt(0))) {
            return false;
        }
        for (int i = 0; i < text.length(); ) {
            int codePoint = text.codePointAt(i);
            if (!Character.isJavaIdentifierPart(codePoint)) {
                return false;
            }
            i += Character.charCount(codePoint);
        }
        return true;
    }

    /** Where the value comes from. */
    public Kind kind() {
        return kind;
    }

    /** The header's name for {@link Kind#HEADER}, else null. */
    public String headerName() {
        return headerName;
    }

    /** The argument's index (0..254) for {@link Kind#ARGUMENT}, else -1. */
    public int argumentIndex() {
        return argumentIndex;
    }

    /** The properties read from the argument, outermost first; empty for a plain {@code argN}. */
    public List<String> propertyPath() {
        return propertyPath;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof KeyPart)) {
            return false;
        }
        KeyPart that = (KeyPart) other;
        return kind == that.kind && argumentIndex == that.argumentIndex
                && (headerName == null ? that.headerName == null : headerName.equalsIgnoreCase(that.headerName))
                && propertyPath.equals(that.propertyPath);
    }

    @Override
    public int hashCode() {
        // header names are case-insensitive: header:X-Tenant and header:x-tenant read one header
        return Objects.hash(kind, headerName == null ? null : headerName.toLowerCase(java.util.Locale.ROOT),
                argumentIndex, propertyPath);
    }

    /** The key as written in the rule file. */
    @Override
    public String toString() {
        switch (kind) {
            case GLOBAL:
                return "global";
            case CLIENT_IP:
                return "client-ip";
            case PRINCIPAL:
                return "principal";
            case HEADER:
                return "header:" + headerName;
            default:
                StringBuilder text = new StringBuilder("arg").append(argumentIndex);
                for (String property : propertyPath) {
                    text.append('.').append(property);
                }
                return text.toString();
        }
    }
}
