package dev.ratelimit.http;

import dev.ratelimit.config.Cidr;
import dev.ratelimit.config.ClientConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Names the client of an HTTP request for {@code client-ip} keys.
 *
 * <p>The client is the peer (the servlet's remote address) unless the peer is a trusted proxy.
 * Only then are {@code X-Forwarded-For} (preferred when present) or {@code Forwarded} (RFC 7239)
 * read, right to left, and the right-most address that is not a trusted proxy is the client; when
 * every address is trusted, the left-most one is.
 *
 * <p>Invariant: a request can never earn a fresh budget by making up header values. The chain is
 * read from its right end, line by line from the last, and only as far as the chosen address:
 * whatever is walked over on the way was appended by trusted proxies, and whatever there is not a
 * plain IP literal (a host name, {@code unknown}, an obfuscated {@code _id}, an empty entry, a
 * control character, an element whose quotes do not close), and a walk of more than
 * {@value #MAX_CHAIN_ENTRIES} entries, makes the peer the client. The walk's length is bounded by
 * the container's limit on a header: it reads each character it passes once (a budget of
 * characters once also cut short the element a proxy appends, which may carry a long
 * {@code host=} the client chose, and made the proxy the key: review of the twenty-third round).
 * What lies <em>left</em> of the chosen address is never looked at, not even its size or its
 * quotes: it was written by the client or by untrusted hops, which could write anything. Once
 * counted against the whole chain (a client's 64 made-up entries, or a {@code Forwarded} line left
 * inside a quoted-string), it made the trusted proxy's own address the key, so a client could pick
 * the proxy's budget and use it up (review of the twenty-third round). Each line is read on its
 * own: a quoted-string never spans lines, so no line can swallow the next.
 *
 * <p>Keys: IPv4 clients as the dotted quad ({@code 203.0.113.7}); IPv6 clients as the network
 * under {@link ClientConfig#ipv6Prefix()} ({@code 2001:db8:1:2::/64}), since one subscriber usually
 * holds a whole /64; IPv4-mapped IPv6, and IPv4 translated into the NAT64 well-known prefix
 * ({@code 64:ff9b::/96}), as IPv4. A peer that is null or not an IP literal gives
 * {@value #UNKNOWN}, one shared key, so even such requests are counted.
 *
 * <p>Thread-safe. The common path (peer not trusted) uses no regex, throws no exception, and for
 * a recent peer address is one array read and one string comparison.
 */
public final class ClientAddressResolver {

    /** The key of a request whose peer address is missing or not an IP literal. */
    public static final String UNKNOWN = "unknown";

    /** A forwarding chain with more entries is not believed. */
    public static final int MAX_CHAIN_ENTRIES = 64;

    /** Peers remembered (a power of two): most requests come from a few addresses. */
    private static final int PEERS = 256;

    private final Cidr[] trustedIpv4;
    private final Cidr[] trustedIpv6;
    private final int ipv6Prefix;
    private final String ipv6Suffix;
    /**
     * What recent peer addresses say on their own, one per slot by hash; a slot is overwritten by
     * the next address that falls in it. Entries are immutable, so a racy read sees a whole one.
     */
    private final Peer[] peers = new Peer[PEERS];

    /** Sorts the trusted blocks by family once, so a lookup only tries blocks that can match. */
    public ClientAddressResolver(ClientConfig client) {
        List<Cidr> ipv4 = new ArrayList<>();
        List<Cidr> ipv6 = new ArrayList<>();
        for (Cidr cidr : client.trustedProxies()) {
            (cidr.isIpv4() ? ipv4 : ipv6).add(cidr);
        }
        this.trustedIpv4 = ipv4.toArray(new Cidr[0]);
        this.trustedIpv6 = ipv6.toArray(new Cidr[0]);
        this.ipv6Prefix = client.ipv6Prefix();
        this.ipv6Suffix = "/" + ipv6Prefix;
    }

    /**
     * The {@code client-ip} key of a request.
     *
     * @param peerAddress the servlet's remote address: IPv4, IPv6 (bracketed or with a
     *     {@code %zone} allowed), or anything else, null included
     * @param xForwardedFor the raw value of every {@code X-Forwarded-For} line, in order; never null
     * @param forwarded the raw value of every {@code Forwarded} line, in order; never null
     * @return the client's dotted quad, its IPv6 network such as {@code 2001:db8:1:2::/64}, or
     *     {@value #UNKNOWN}
     */
    public String clientKey(String peerAddress, List<String> xForwardedFor, List<String> forwarded) {
        Peer peer = peer(peerAddress);
        if (!peer.trusted || (xForwardedFor.isEmpty() && forwarded.isEmpty())) {
            return peer.key;
        }
        boolean xff = !xForwardedFor.isEmpty();
        byte[] client = rightMostUntrusted(xff ? xForwardedFor : forwarded, xff);
        return client == null ? peer.key : key(client);
    }

    /**
     * The key of a request from {@code peerAddress} when the peer is not a trusted proxy (the
     * forwarding headers are not read then), or null when it is one.
     */
    public String untrustedPeerKey(String peerAddress) {
        Peer peer = peer(peerAddress);
        return peer.trusted ? null : peer.key;
    }

    private Peer peer(String address) {
        if (address == null) {
            return Peer.UNPARSABLE;
        }
        int slot = address.hashCode() & (PEERS - 1);
        Peer known = peers[slot];
        if (known != null && known.address.equals(address)) {
            return known;
        }
        byte[] parsed = IpLiterals.parse(address, false);
        Peer peer = parsed == null ? new Peer(address, false, UNKNOWN)
                : new Peer(address, isTrusted(parsed), key(parsed));
        peers[slot] = peer;
        return peer;
    }

    /** A peer address, whether it is a trusted proxy, and its own key. */
    private static final class Peer {
        static final Peer UNPARSABLE = new Peer("", false, UNKNOWN);

        final String address;
        final boolean trusted;
        final String key;

        Peer(String address, boolean trusted, String key) {
            this.address = address;
            this.trusted = trusted;
            this.key = key;
        }
    }

    /**
     * Whether the address is a trusted proxy's. An IPv4 address translated into the NAT64
     * well-known prefix is one as its IPv4 address too, as it is keyed: a proxy listed by its IPv4
     * address and reaching the application through a translator was not trusted, and the clients
     * it forwarded were all keyed as its own address.
     */
    private boolean isTrusted(byte[] address) {
        if (address.length == 16 && isNat64WellKnown(address)
                && inBlocks(trustedIpv4, java.util.Arrays.copyOfRange(address, 12, 16))) {
            return true;
        }
        return inBlocks(address.length == 4 ? trustedIpv4 : trustedIpv6, address);
    }

    private static boolean inBlocks(Cidr[] blocks, byte[] address) {
        if (blocks.length == 0) {
            return false;
        }
        InetAddress inet;
        try {
            inet = InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new AssertionError("4 or 16 bytes are always an address", e);
        }
        for (Cidr block : blocks) {
            if (block.contains(inet)) {
                return true;
            }
        }
        return false;
    }

    private String key(byte[] address) {
        if (address.length == 4) {
            return IpLiterals.format(address);
        }
        if (isNat64WellKnown(address)) {
            // an IPv4 client translated into IPv6 (NAT64, SIIT-DC: 64:ff9b::203.0.113.7): each
            // its own key as the IPv4 address, not one /64 for every IPv4 client there is
            return IpLiterals.format(java.util.Arrays.copyOfRange(address, 12, 16));
        }
        byte[] network = address.clone();
        for (int i = 0; i < network.length; i++) {
            int keep = Math.max(0, Math.min(8, ipv6Prefix - i * 8));
            network[i] &= (byte) (0xFF00 >>> keep);
        }
        return IpLiterals.format(network) + ipv6Suffix;
    }

    /** Whether {@code address} (16 bytes) is in the NAT64 well-known prefix {@code 64:ff9b::/96} (RFC 6052). */
    static boolean isNat64WellKnown(byte[] address) {
        if (address[0] != 0 || address[1] != 0x64 || address[2] != (byte) 0xff || address[3] != (byte) 0x9b) {
            return false;
        }
        for (int i = 4; i < 12; i++) {
            if (address[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /** {@link #previousSeparator}'s answer for a line whose quotes do not close before its start. */
    private static final int UNBALANCED = -2;

    /**
     * Walks the chain from its right end, the lines from the last and each line's entries from its
     * end: the first address that is not a trusted proxy, or the left-most when all are; null as
     * soon as an entry on the way is not an address, or the walk passes
     * {@link #MAX_CHAIN_ENTRIES} entries.
     *
     * @param lines the header's lines, in order (a null line is one empty entry)
     * @param xff whether they are {@code X-Forwarded-For} lines, else {@code Forwarded} lines
     */
    private byte[] rightMostUntrusted(List<String> lines, boolean xff) {
        int entries = 0;
        byte[] leftMost = null;
        for (int l = lines.size() - 1; l >= 0; l--) {
            String line = lines.get(l) == null ? "" : lines.get(l);
            int end = line.length();
            while (true) {
                int separator = previousSeparator(line, end, xff);
                if (separator < -1 || ++entries > MAX_CHAIN_ENTRIES) {
                    return null;
                }
                String entry = xff ? trim(line, separator + 1, end) : forNode(line, separator + 1, end);
                byte[] address = entry == null ? null : IpLiterals.parse(entry, true);
                if (address == null || !isTrusted(address)) {
                    return address;
                }
                leftMost = address;
                if (separator < 0) {
                    break;
                }
                end = separator;
            }
        }
        return leftMost;
    }

    /**
     * The index of the last entry separator ({@code ,}) before {@code end}, read right to left
     * (in a {@code Forwarded} line, outside quoted-strings); -1 when the entry starts the line;
     * {@link #UNBALANCED} when a {@code Forwarded} line's quotes do not close before its start.
     * Read from the right, an element a proxy appends is found whatever the client wrote before it:
     * its own text holds no open quote.
     */
    private static int previousSeparator(String line, int end, boolean xff) {
        boolean quoted = false;
        for (int i = end - 1; i >= 0; i--) {
            char c = line.charAt(i);
            if (c == ',' && !quoted) {
                return i;
            }
            if (c == '"' && !xff && !escaped(line, i)) {
                quoted = !quoted;
            }
        }
        return quoted ? UNBALANCED : -1;
    }

    /** Whether the character at {@code at} follows an odd number of backslashes. */
    private static boolean escaped(String line, int at) {
        int backslashes = 0;
        while (at - 1 - backslashes >= 0 && line.charAt(at - 1 - backslashes) == '\\') {
            backslashes++;
        }
        return (backslashes & 1) == 1;
    }

    /**
     * The value of the single {@code for} pair of the element in {@code [from, to)}, unquoted; null
     * when there is none, more than one, or it is malformed, and when any pair of the element holds
     * a quote that does not make its value one whole quoted-string ({@code x=a"b}, {@code "x"=1}).
     * Other pairs are otherwise taken as they come: proxies write {@code host=example.com:8080}
     * unquoted, which RFC 7239 does not allow, and that hides nothing.
     */
    private static String forNode(String chain, int from, int to) {
        String node = null;
        int start = from;
        while (start <= to) {
            int semicolon = nextSeparator(chain, start, to, ';');
            String pair = trim(chain, start, semicolon);
            int equals = pair.indexOf('=');
            if (!quotesWellPlaced(pair, equals)) {
                return null;
            }
            if (equals == 3 && pair.regionMatches(true, 0, "for", 0, 3)) {
                if (node != null) {
                    return null;
                }
                node = unquote(trim(pair, 4, pair.length()));
                if (node == null) {
                    return null;
                }
            }
            start = semicolon + 1;
        }
        return node;
    }

    /** Whether {@code pair} has no quote, or its value after {@code =} is exactly one quoted-string. */
    private static boolean quotesWellPlaced(String pair, int equals) {
        int quote = pair.indexOf('"');
        if (quote < 0) {
            return true;
        }
        if (equals < 0 || quote < equals) {
            return false;
        }
        String value = trim(pair, equals + 1, pair.length());
        return !value.isEmpty() && value.charAt(0) == '"' && unquote(value) != null;
    }

    /** A token as is, or the content of a quoted-string with its {@code \} escapes undone; null if malformed. */
    private static String unquote(String value) {
        if (value.isEmpty() || value.charAt(0) != '"') {
            return value;
        }
        StringBuilder content = new StringBuilder(value.length());
        for (int i = 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"') {
                return i == value.length() - 1 ? content.toString() : null;
            }
            if (c == '\\') {
                if (++i == value.length()) {
                    return null;
                }
                c = value.charAt(i);
            }
            content.append(c);
        }
        return null;
    }

    /** The index of the first {@code separator} in {@code [from, to)} outside a quoted-string, or {@code to}. */
    private static int nextSeparator(String text, int from, int to, char separator) {
        boolean quoted = false;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    quoted = false;
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == separator) {
                return i;
            }
        }
        return to;
    }

    /** {@code text[from, to)} without surrounding spaces and tabs (HTTP's optional whitespace). */
    private static String trim(String text, int from, int to) {
        while (from < to && isOptionalWhitespace(text.charAt(from))) {
            from++;
        }
        while (to > from && isOptionalWhitespace(text.charAt(to - 1))) {
            to--;
        }
        return text.substring(from, to);
    }

    private static boolean isOptionalWhitespace(char c) {
        return c == ' ' || c == '\t';
    }
}
