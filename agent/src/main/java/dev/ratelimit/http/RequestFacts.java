package dev.ratelimit.http;

import dev.ratelimit.Hex;
import dev.ratelimit.config.TokenSource;
import dev.ratelimit.limit.RequestKeys;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
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
    private final boolean forged;
    /** The header that carries internal tokens: a key read from it is hashed (see {@link #header}). */
    private final String tokenHeader;
    private String clientIp;
    /** The last credential header value keyed, with its key (see {@link #header}). */
    private KeyedCredential credential;
    /**
     * The request as the innermost entry point of the application saw it: a filter's wrapper
     * (Spring Security's, say) may know the user when the container's request does not.
     */
    private volatile Object innermost;
    /**
     * The RateLimit-Policy items of the HTTP rules that counted the request and let it through
     * (null: none): a method rule's 429, which replaces the response, lists them too. Volatile:
     * a later dispatch on another thread may write that 429.
     */
    private volatile String httpPolicies;

    RequestFacts(ServletApi api, Object request, ClientAddressResolver clients, TokenVerifier.Verdict verdict,
            String tokenHeader) {
        this.tokenHeader = tokenHeader;
        this.api = api;
        this.request = request;
        this.clients = clients;
        this.exempt = verdict == TokenVerifier.Verdict.VALID;
        this.forged = verdict == TokenVerifier.Verdict.FORGED;
        this.innermost = request;
    }

    /** Whether these are the facts of this very request object (not merely an equal one). */
    boolean isFor(Object request) {
        return this.request == request;
    }

    void httpPolicies(String policies) {
        this.httpPolicies = policies;
    }

    String httpPolicies() {
        return httpPolicies;
    }

    /**
     * Whether {@code request} is a wrapper of the request these facts are of (see
     * {@link ServletApi#wraps}) that asks for the same thing: the same method and URI. A wrapper
     * with a URI or a method of its own is a sub-request (a batch endpoint's), counted as a
     * request of its own (review of the change).
     */
    boolean isWrappedBy(Object request) {
        return api.wraps(request, this.request)
                && java.util.Objects.equals(api.requestUri(request), api.requestUri(this.request))
                && java.util.Objects.equals(api.method(request), api.method(this.request));
    }

    /** Records the request object an entry point inside the first one was given. */
    void enteredWith(Object request) {
        if (request != innermost && api.matches(request)) {
            innermost = request;
        }
    }

    @Override
    public String clientIp() {
        String ip = clientIp;
        if (ip == null) {
            ContainerForwarding.lookAt(api, request);
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
        String value = api.header(request, name);
        if (value == null) {
            return null;
        }
        if (isCredentials(name)) {
            // first, also when Authorization is the exempt header: one credential, one key;
            // worked out once per request and value, not once per rule that reads it
            // (one field holding final ones: an async dispatch on another thread reads it too)
            KeyedCredential keyed = credential;
            if (keyed == null || !keyed.value.equals(value)) {
                keyed = new KeyedCredential(value, api.repeated(request, name)
                        ? SEVERAL_CREDENTIALS : digest(credentials(value)));
                credential = keyed;
            }
            return keyed.key;
        }
        if (tokenHeader != null && tokenHeader.equalsIgnoreCase(name)) {
            // a rule keyed on the token header counts per token, but keys are kept in the clear
            // (in memory, in Redis): key on the token's digest, never on the token
            return digest(value);
        }
        return value;
    }

    /**
     * The one key of every request that carries a credential header more than once. The field is
     * a singleton (RFC 9110), so no client sends it twice, and servers do not agree on which line
     * counts: Tomcat, Jetty and Spring Security read the first, Undertow's BASIC mechanism the first
     * that is Basic. Keyed on either, a client varied the other line and had a fresh budget for
     * each request; so all such requests share one key (a line break, which no header value can
     * hold, makes it apart from every credential's).
     */
    private static final String SEVERAL_CREDENTIALS = digest("\n");

    /** Headers that carry a credential (RFC 9110, section 11): keyed on their digest. */
    private static boolean isCredentials(String name) {
        return "Authorization".equalsIgnoreCase(name) || "Proxy-Authorization".equalsIgnoreCase(name);
    }

    /**
     * A credential as one key whatever way the client spells it: RFC 9110 makes the scheme
     * case-insensitive and allows one or more spaces after it, so {@code Bearer x},
     * {@code bearer x} and {@code BEARER  x} are one credential, which an application accepts
     * all of; keyed as sent, each was a budget of its own (64 for a six-letter scheme). The
     * scheme is lower-cased and the spaces after it made one; what follows is kept as it is
     * (a token68 is case-sensitive).
     */
    private static String credentials(String value) {
        int start = 0;
        int end = value.length();
        while (start < end && isSpace(value.charAt(start))) {
            start++;
        }
        while (end > start && isSpace(value.charAt(end - 1))) {
            end--;
        }
        int schemeEnd = start;
        while (schemeEnd < end && !isSpace(value.charAt(schemeEnd))) {
            schemeEnd++;
        }
        int rest = schemeEnd;
        while (rest < end && isSpace(value.charAt(rest))) {
            rest++;
        }
        StringBuilder text = new StringBuilder(end - start);
        for (int i = start; i < schemeEnd; i++) {
            char c = value.charAt(i);
            text.append(c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c);
        }
        if (rest < end) {
            text.append(' ');
            String token = value.substring(rest, end);
            if (schemeEnd - start == 5 && value.regionMatches(true, start, "basic", 0, 5)) {
                // Basic's user:password in Base64, which decoders (java.util.Base64, Spring
                // Security's) read with or without padding and whatever the unused bits of the
                // last character: one user:password was up to 32 spellings, each its own budget.
                // Undertow's (FlexBase64) also skips spaces and tabs anywhere and ignores
                // everything from the first '=': read as the most lenient decoder reads it
                try {
                    token = Base64.getEncoder().encodeToString(Base64.getDecoder().decode(base64Digits(token)));
                } catch (IllegalArgumentException notBase64) {
                    // kept as sent: no decoder takes it for a credential either
                }
            }
            text.append(token);
        }
        return text.toString();
    }

    /**
     * The Base64 digits of a Basic token as the most lenient decoder reads them: spaces and tabs
     * left out, nothing from the first {@code =} on (unless the token starts with one, which no
     * decoder takes), and no digit dangling after the last group of four.
     */
    private static String base64Digits(String token) {
        StringBuilder digits = new StringBuilder(token.length());
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c == '=' && digits.length() > 0) {
                break;
            }
            if (!isSpace(c)) {
                digits.append(c);
            }
        }
        if (digits.length() % 4 == 1 && digits.charAt(0) != '=') {
            // a digit left over after the last group of four carries 6 bits, no whole byte:
            // FlexBase64 drops it (java.util.Base64 refuses the token), so it is no part of the key
            digits.setLength(digits.length() - 1);
        }
        return digits.toString();
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t';
    }

    private static String digest(String value) {
        return "sha256:" + Hex.of(TokenSource.sha256(value.getBytes(StandardCharsets.UTF_8)));
    }

    @Override
    public String principal() {
        return api.principal(innermost);
    }

    @Override
    public boolean exempt() {
        return exempt;
    }

    @Override
    public boolean forged() {
        return forged;
    }

    /** A credential header's value and the key it was made. */
    private static final class KeyedCredential {
        final String value;
        final String key;

        KeyedCredential(String value, String key) {
            this.value = value;
            this.key = key;
        }
    }
}
