package dev.ratelimit.config;

import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/** How the client of an HTTP request is identified for {@code client-ip} keys. */
public final class ClientConfig {

    /** IPv6 clients are counted per /64 unless the rule file says otherwise. */
    public static final int DEFAULT_IPV6_PREFIX = 64;

    private static final ClientConfig DEFAULT = new ClientConfig(List.of(), DEFAULT_IPV6_PREFIX);

    private final List<Cidr> trustedProxies;
    private final int ipv6Prefix;

    /**
     * @param trustedProxies the peers allowed to name the client in X-Forwarded-For / Forwarded
     * @param ipv6Prefix how many leading bits of an IPv6 client address form its key, 1..128
     */
    public ClientConfig(List<Cidr> trustedProxies, int ipv6Prefix) {
        if (ipv6Prefix < 1 || ipv6Prefix > 128) {
            throw new IllegalArgumentException("ipv6-prefix must be from 1 to 128, got " + ipv6Prefix);
        }
        this.trustedProxies = List.copyOf(trustedProxies);
        this.ipv6Prefix = ipv6Prefix;
    }

    /** No trusted proxies, IPv6 clients per /64. */
    public static ClientConfig defaults() {
        return DEFAULT;
    }

    /** The peers allowed to name the client in X-Forwarded-For / Forwarded; empty trusts none. */
    public List<Cidr> trustedProxies() {
        return trustedProxies;
    }

    /**
     * A warning when a trusted-proxies block covers every address of its family ({@code 0.0.0.0/0},
     * {@code ::/0}): every client may then name its own {@code client-ip} key in
     * {@code X-Forwarded-For}, and so earns a fresh budget per request; null when none does. Valid
     * (a test rig may want it), so said, not refused: by {@code check} and when the agent starts
     * or reloads the file.
     */
    public String trustEveryoneWarning() {
        List<String> everyone = trustedProxies.stream().filter(block -> block.prefixLength() == 0)
                .map(Cidr::toString).collect(Collectors.toList());
        return everyone.isEmpty() ? null : "client.trusted-proxies trusts every address (" + String.join(", ", everyone)
                + "): any client can choose its client-ip key through X-Forwarded-For or Forwarded, and so its"
                + " budget; list only your proxies' addresses";
    }

    /** How many leading bits of an IPv6 client address form its key (default 64). */
    public int ipv6Prefix() {
        return ipv6Prefix;
    }

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof ClientConfig)) {
            return false;
        }
        ClientConfig that = (ClientConfig) other;
        return ipv6Prefix == that.ipv6Prefix && trustedProxies.equals(that.trustedProxies);
    }

    @Override
    public int hashCode() {
        return Objects.hash(trustedProxies, ipv6Prefix);
    }

    /** {@code trusted-proxies 127.0.0.1/32, 10.0.0.0/8; ipv6-prefix 64}. */
    @Override
    public String toString() {
        String proxies = trustedProxies.isEmpty() ? "none"
                : trustedProxies.stream().map(Cidr::toString).collect(Collectors.joining(", "));
        return "trusted-proxies " + proxies + "; ipv6-prefix " + ipv6Prefix;
    }
}
