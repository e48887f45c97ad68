package dev.ratelimit.http;

import dev.ratelimit.config.Cidr;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Strict parsing and formatting of IP address literals as they appear in a servlet peer address,
 * an {@code X-Forwarded-For} entry or a {@code Forwarded: for=} node.
 *
 * <p>Parsing returns the address bytes (4 for IPv4, 16 for IPv6) or null; it never throws, so
 * garbage costs no exception. An IPv4-mapped IPv6 address ({@code ::ffff:1.2.3.4}) comes back as
 * its 4 IPv4 bytes.
 *
 * <p><b>Important</b>: parsing never does a DNS lookup. IPv4 is parsed here. IPv6 text reaches
 * {@link InetAddress#getByName} only when it starts with a hex digit or {@code :}, holds a
 * {@code :} and nothing but hex digits, {@code :} and {@code .}: for such text the JDK takes its
 * literal branch and throws rather than resolving when the literal is invalid.
 */
final class IpLiterals {

    /** Longer text is never an address: a bracketed IPv6 literal with a zone and a port fits well within it. */
    static final int MAX_LITERAL_CHARS = 128;

    /** {@code ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255}. */
    private static final int MAX_IPV6_CHARS = 45;

    private IpLiterals() {
    }

    /**
     * Parses an IPv4 dotted quad, an IPv6 address (optionally in brackets, optionally with a
     * {@code %zone}) and, when {@code allowPort}, a port after an IPv4 address or a bracketed IPv6
     * address ({@code 192.0.2.1:8080}, {@code [2001:db8::1]:4711}; RFC 7239 obfuscated ports such as
     * {@code :_abc} too). The text must not carry surrounding whitespace.
     *
     * @return 4 or 16 address bytes, or null when {@code text} is not such a literal
     */
    static byte[] parse(String text, boolean allowPort) {
        if (text == null || text.isEmpty() || text.length() > MAX_LITERAL_CHARS) {
            return null;
        }
        int end = text.length();
        if (text.charAt(0) == '[') {
            int close = text.indexOf(']');
            if (close < 0) {
                return null;
            }
            if (close + 1 < end && !(allowPort && text.charAt(close + 1) == ':' && isPort(text, close + 2, end))) {
                return null;
            }
            return parseIpv6(text, 1, close);
        }
        int colon = text.indexOf(':');
        if (colon < 0) {
            return parseIpv4(text, 0, end);
        }
        if (text.indexOf(':', colon + 1) < 0) {
            // One colon: an IPv6 address has at least two, so this is IPv4 with a port.
            return allowPort && isPort(text, colon + 1, end) ? parseIpv4(text, 0, colon) : null;
        }
        return parseIpv6(text, 0, end);
    }

    /**
     * Exactly four decimal octets 0..255 without leading zeros (some tools read {@code 010} as
     * octal 8, so such text is ambiguous).
     */
    static byte[] parseIpv4(String text, int from, int to) {
        if (to - from < 7 || to - from > 15) {
            return null;
        }
        byte[] address = new byte[4];
        int octet = 0;
        int value = 0;
        int digits = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') {
                if (digits == 1 && value == 0) {
                    return null;
                }
                value = value * 10 + (c - '0');
                digits++;
                if (value > 255) {
                    return null;
                }
            } else if (c == '.' && digits > 0 && octet < 3) {
                address[octet++] = (byte) value;
                value = 0;
                digits = 0;
            } else {
                return null;
            }
        }
        if (digits == 0 || octet != 3) {
            return null;
        }
        address[3] = (byte) value;
        return address;
    }

    private static byte[] parseIpv6(String text, int from, int to) {
        int percent = text.indexOf('%', from);
        if (percent >= 0 && percent < to) {
            if (!isZone(text, percent + 1, to)) {
                return null;
            }
            to = percent;
        }
        if (to - from < 2 || to - from > MAX_IPV6_CHARS || !(isHex(text.charAt(from)) || text.charAt(from) == ':')) {
            return null;
        }
        int lastColon = -1;
        boolean dot = false;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c == ':') {
                lastColon = i;
            } else if (c == '.') {
                dot = true;
            } else if (!isHex(c)) {
                return null;
            }
        }
        // The JDK reads an embedded IPv4 part leniently (01.2.3.4); hold it to the dotted-quad rules.
        if (lastColon < 0 || (dot && parseIpv4(text, lastColon + 1, to) == null)) {
            return null;
        }
        try {
            return InetAddress.getByName(text.substring(from, to)).getAddress();
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static boolean isZone(String text, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (!(isAlphanumeric(c) || c == '.' || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** 0..65535 in decimal, or an RFC 7239 obfuscated port: {@code _} and letters, digits, {@code . _ -}. */
    private static boolean isPort(String text, int from, int to) {
        if (from >= to) {
            return false;
        }
        if (text.charAt(from) == '_') {
            return isZone(text, from + 1, to);
        }
        if (to - from > 5) {
            return false;
        }
        int value = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
            value = value * 10 + (c - '0');
        }
        return value <= 65535;
    }

    private static boolean isHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static boolean isAlphanumeric(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    /** {@code 203.0.113.7}, or for 16 bytes the RFC 5952 text. */
    static String format(byte[] address) {
        return Cidr.formatAddress(address);
    }
}
