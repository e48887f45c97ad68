package dev.ratelimit.testing;

import dev.ratelimit.limit.RequestKeys;

/** A request's keys fixed in advance: a client address, no header, no principal, and its token's verdict. */
public final class FixedRequest implements RequestKeys {
    private final String clientIp;
    private final boolean exempt;
    private final boolean forged;

    private FixedRequest(String clientIp, boolean exempt, boolean forged) {
        this.clientIp = clientIp;
        this.exempt = exempt;
        this.forged = forged;
    }

    /** A request from {@code clientIp} with no token. */
    public static FixedRequest from(String clientIp) {
        return new FixedRequest(clientIp, false, false);
    }

    /** The same request carrying the real token (when {@code exempt}). */
    public FixedRequest exempt(boolean exempt) {
        return new FixedRequest(clientIp, exempt, forged);
    }

    /** The same request carrying a token that matched none. */
    public FixedRequest withForgedToken() {
        return new FixedRequest(clientIp, false, true);
    }

    @Override
    public String clientIp() {
        return clientIp;
    }

    @Override
    public String header(String name) {
        return null;
    }

    @Override
    public String principal() {
        return null;
    }

    @Override
    public boolean exempt() {
        return exempt;
    }

    @Override
    public boolean forged() {
        return forged;
    }
}
