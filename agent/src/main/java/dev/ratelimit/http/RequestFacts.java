package dev.ratelimit.http;

import dev.ratelimit.limit.RequestKeys;

/**
 * What the agent knows about the request being served: its client key and token verdict, worked
 * out once, and its headers and principal, read on demand. Kept in the bridge's thread-local
 * while the request is served, so method rules can key on it and honour its exemption.
 */
final class RequestFacts implements RequestKeys {
    private final ServletApi api;
    private final Object request;
    private final ClientAddressResolver clients;
    private final boolean exempt;
    private String clientIp;

    RequestFacts(ServletApi api, Object request, ClientAddressResolver clients, boolean exempt) {
        this.api = api;
        this.request = request;
        this.clients = clients;
        this.exempt = exempt;
    }

    /** Whether these are the facts of this very request object (not merely an equal one). */
    boolean isFor(Object request) {
        return this.request == request;
    }

    @Override
    public String clientIp() {
        String ip = clientIp;
        if (ip == null) {
            String peer = api.remoteAddr(request);
            ip = clients.untrustedPeerKey(peer);
            if (ip == null) {
                // a trusted proxy: only now are its forwarding headers worth reading
                ip = clients.clientKey(peer, api.headers(request, "X-Forwarded-For"), api.headers(request, "Forwarded"));
            }
            clientIp = ip;
        }
        return ip;
    }

    @Override
    public String header(String name) {
        return api.header(request, name);
    }

    @Override
    public String principal() {
        return api.principal(request);
    }

    @Override
    public boolean exempt() {
        return exempt;
    }
}
