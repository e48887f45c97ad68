package dev.ratelimit.http;

import dev.ratelimit.limit.RequestKeys;
import java.util.Collections;
import java.util.List;

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
                ip = clients.clientKey(peer, lines("X-Forwarded-For"), lines("Forwarded"));
            }
            clientIp = ip;
        }
        return ip;
    }

    /** Every line of a header; the lines are read only when the header is there at all. */
    private List<String> lines(String name) {
        return api.header(request, name) == null ? Collections.emptyList() : api.headers(request, name);
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
