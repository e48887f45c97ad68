package dev.ratelimit.http;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Says once when the servlet container runs Tomcat's RemoteIpValve or RemoteIpFilter, which
 * rewrite a request's client address from forwarding headers before the agent sees it.
 *
 * <p>{@code client-ip} keys on the request's remote address, and reads {@code X-Forwarded-For}
 * only when that address is one of the rule file's trusted proxies. Tomcat's
 * {@code RemoteIpValve} and {@code RemoteIpFilter} replace the remote address first, with the
 * address their own list of internal proxies lets the headers name; Spring Boot installs the valve
 * by itself on Kubernetes and with {@code server.forward-headers-strategy=native}, and its list
 * holds every private range. Behind a load balancer that rewrites sources to a private address
 * (a Kubernetes service's node SNAT), a client could then name a fresh key in every request,
 * whatever the rule file trusts (review of the twenty-third round). The valve leaves its mark on
 * every request it passes, {@value #TOMCAT_REWRITE}, rewritten or not (a peer outside its internal
 * proxies is left as it is), and none when its request attributes are turned off: the mark says
 * the valve is there, not that it rewrote. The first requests keyed by client are looked at for
 * it, and a warning says what it means. Nothing is said of the client itself.
 */
final class ContainerForwarding {
    /** Set by Tomcat's RemoteIpValve and RemoteIpFilter on each request they pass. */
    static final String TOMCAT_REWRITE = "org.apache.tomcat.remoteAddr";
    /** Requests looked at: the valve is the container's, so the first ones tell. */
    private static final int LOOKS = 16;

    private static final AtomicInteger looked = new AtomicInteger();
    private static volatile boolean settled;

    private ContainerForwarding() {
    }

    /** Looks at one request keyed by client, until the question is settled. */
    static void lookAt(ServletApi api, Object request) {
        if (settled) {
            return;
        }
        if (looked.incrementAndGet() > LOOKS) {
            settled = true;
            return;
        }
        Object mark;
        try {
            mark = api.attribute(request, TOMCAT_REWRITE);
        } catch (RuntimeException | LinkageError e) {
            return;
        }
        if (mark != null) {
            settled = true;
            System.getLogger("dev.ratelimit").log(Level.WARNING, "rate-limit-agent: the servlet container runs"
                    + " Tomcat's RemoteIpValve or RemoteIpFilter (Spring Boot installs the valve on Kubernetes and with"
                    + " server.forward-headers-strategy=native), which rewrites the client address from"
                    + " X-Forwarded-For before the agent sees it, for peers in its own internal proxies (by default"
                    + " every private range and loopback). client-ip keys then use the address it chose, and the"
                    + " rule file's client.trusted-proxies apply to that address, not to the real peer: a client"
                    + " reaching the application from an address in those ranges names its own key. Unless"
                    + " server.tomcat.remoteip.internal-proxies holds only your proxies, set"
                    + " server.forward-headers-strategy=none and list your proxies under client.trusted-proxies");
        }
    }

    /** For tests: looks again from the first request. */
    static void reset() {
        looked.set(0);
        settled = false;
    }
}
