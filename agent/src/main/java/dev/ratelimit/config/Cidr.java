package dev.ratelimit.config;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A block of IPv4 or IPv6 addresses, such as {@code 10.0.0.0/8} or {@code fd00::/8}.
 *
 * <p>IPv4 blocks never contain IPv6 addresses and the other way round, with one exception: an
 * IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}, which some dual-stack servers report for IPv4
 * peers) is looked up as the IPv4 address it maps. For the same reason a block may not be written
 * in the mapped form: write the IPv4 block instead.
 *
 * <p><b>Important</b>: parsing never does a DNS lookup. IPv4 literals are checked here, and
 * {@link InetAddress#getByName} is only given text that cannot be a host name.
 */
public final class Cidr {

    private final byte[] network;
    private final int prefix;

    private Cidr(byte[] network, int prefix) {
        this.network = network;
        this.prefix = prefix;
    }

    /**
     * Parses {@code a.b.c.d/n}, {@code a.b.c.d} (a /32), {@code x::y/n} or a bare IPv6 address
     * (a /128).
     *
     * @throws IllegalArgumentException with a message for the user
     */
    public static Cidr parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("empty address; expected an address block such as 10.0.0.0/8");
        }
        int slash = text.indexOf('/');
        String addressText = slash < 0 ? text : text.substring(0, slash);
        byte[] address = addressText.indexOf(':') >= 0 ? parseIpv6(text, addressText) : parseIpv4(text, addressText);
        int bits = address.length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String prefixText = text.substring(slash + 1);
            if (!prefixText.matches("0|[1-9][0-9]{0,2}") || Integer.parseInt(prefixText) > bits) {
                throw new IllegalArgumentException("invalid address block " + NodeReader.quoted(text) + ": the prefix length after '/'"
                        + " must be a whole number from 0 to " + bits);
            }
            prefix = Integer.parseInt(prefixText);
        }
        byte[] network = mask(address, prefix);
        if (!Arrays.equals(network, address)) {
            throw new IllegalArgumentException("invalid address block " + NodeReader.quoted(text) + ": it has bits set after the /"
                    + prefix + " prefix; did you mean " + format(network, prefix) + "?");
        }
        return new Cidr(network, prefix);
    }

    private static byte[] parseIpv4(String text, String addressText) {
        String[] octets = addressText.split("\\.", -1);
        if (octets.length != 4) {
            throw notAnAddress(text);
        }
        byte[] address = new byte[4];
        for (int i = 0; i < 4; i++) {
            // No leading zeros: some tools read 010 as octal 8, so the text would be ambiguous.
            if (!octets[i].matches("0|[1-9][0-9]{0,2}") || Integer.parseInt(octets[i]) > 255) {
                throw notAnAddress(text);
            }
            address[i] = (byte) Integer.parseInt(octets[i]);
        }
        return address;
    }

    private static byte[] parseIpv6(String text, String addressText) {
        for (int i = 0; i < addressText.length(); i++) {
            char c = addressText.charAt(i);
            boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
            if (!hex && c != ':' && c != '.') {
                throw notAnAddress(text);
            }
        }
        int dot = addressText.indexOf('.');
        if (dot >= 0) {
            // an IPv4 address in its last 32 bits (::ffff:1.2.3.4): written as a plain one must
            // be, without leading zeros (the JDK took ::01.2.3.4 where 01.2.3.4 was refused)
            parseIpv4(text, addressText.substring(addressText.lastIndexOf(':') + 1));
        }
        InetAddress parsed;
        try {
            // Only hex digits, ':' and '.' with at least one ':': a literal, never a host name to resolve.
            parsed = InetAddress.getByName(addressText);
        } catch (UnknownHostException e) {
            throw notAnAddress(text);
        }
        if (!(parsed instanceof Inet6Address)) {
            throw new IllegalArgumentException("invalid address block " + NodeReader.quoted(text)
                    + ": write IPv4-mapped IPv6 addresses as plain IPv4 addresses (a.b.c.d)");
        }
        return parsed.getAddress();
    }

    private static IllegalArgumentException notAnAddress(String text) {
        return new IllegalArgumentException("invalid address block " + NodeReader.quoted(text)
                + "; expected an IPv4 or IPv6 address with an optional prefix length, such as 10.0.0.0/8,"
                + " 127.0.0.1 or fd00::/8 (host names are not accepted)");
    }

    private static byte[] mask(byte[] address, int prefix) {
        byte[] masked = address.clone();
        for (int i = 0; i < masked.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            masked[i] &= (byte) (0xFF00 >>> keep);
        }
        return masked;
    }

    /**
     * True when {@code address} is in this block. An IPv4-mapped IPv6 address counts as its IPv4
     * address; otherwise IPv4 and IPv6 never match each other.
     */
    public boolean contains(InetAddress address) {
        if (address == null) {
            return false;
        }
        byte[] bytes = address.getAddress();
        if (address instanceof Inet6Address && network.length == 4 && isIpv4Mapped(bytes)) {
            bytes = Arrays.copyOfRange(bytes, 12, 16);
        }
        if (bytes.length != network.length) {
            return false;
        }
        return Arrays.equals(mask(bytes, prefix), network);
    }

    private static boolean isIpv4Mapped(byte[] bytes) {
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xFF && bytes[11] == (byte) 0xFF;
    }

    /** True for an IPv4 block. */
    public boolean isIpv4() {
        return network.length == 4;
    }

    /** The prefix length: 0..32 for IPv4, 0..128 for IPv6. */
    public int prefixLength() {
        return prefix;
    }

    private static String format(byte[] network, int prefix) {
        return formatAddress(network) + "/" + prefix;
    }

    /**
     * An address as text: {@code 203.0.113.7} for 4 bytes; for 16 bytes RFC 5952 (lower-case hex,
     * the first longest run of two or more zero groups as {@code ::}).
     */
    public static String formatAddress(byte[] address) {
        if (address.length == 4) {
            return (address[0] & 0xFF) + "." + (address[1] & 0xFF) + "." + (address[2] & 0xFF) + "." + (address[3] & 0xFF);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((address[2 * i] & 0xFF) << 8) | (address[2 * i + 1] & 0xFF);
        }
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < 8; i++) {
            int length = 0;
            while (i + length < 8 && groups[i + length] == 0) {
                length++;
            }
            if (length > bestLength) {
                bestStart = i;
                bestLength = length;
            }
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                text.append("::");
                i += bestLength - 1;
                continue;
            }
            if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
                text.append(':');
            }
            text.append(Integer.toHexString(groups[i]));
        }
        return text.toString();
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof Cidr)) {
            return false;
        }
        Cidr that = (Cidr) other;
        return prefix == that.prefix && Arrays.equals(network, that.network);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(network) + prefix;
    }

    /** {@code 10.0.0.0/8}, {@code fd00::/8}: the network address and the prefix length. */
    @Override
    public String toString() {
        return format(network, prefix);
    }
}
