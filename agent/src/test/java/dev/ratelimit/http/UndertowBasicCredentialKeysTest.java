package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.RequestKeys;
import io.undertow.util.FlexBase64;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * README, {@code header:NAME}: "A credential is one key however the client spells its scheme and
 * the spaces after it ... save Basic's Base64, which is decoded and encoded again ... so one
 * {@code user:password} has up to 32 spellings". Undertow 2.3, one of the containers the agent
 * supports, authenticates BASIC with {@link FlexBase64}, which skips spaces and tabs anywhere in
 * the Base64 and ignores everything from the first {@code =} on, and its mechanism reads every
 * {@code Authorization} line, not only the first: so one {@code user:password} has unbounded
 * spellings there, each a fresh budget under {@code key: header:Authorization}
 * ({@code UndertowBasicAuthIT} shows it over HTTP).
 */
class UndertowBasicCredentialKeysTest {
    private static final String ALICE = "alice:pw";
    private static final String CANONICAL = "Basic YWxpY2U6cHc=";

    @AfterEach
    void clear() {
        RequestContext.set(null);
    }

    /** What Undertow's BasicAuthenticationMechanism makes of the text after "Basic ". */
    private static String undertowDecodes(String base64) throws Exception {
        ByteBuffer decoded = FlexBase64.decode(base64);
        byte[] bytes = new byte[decoded.remaining()];
        decoded.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void spellingsUndertowDecodesToOneUserPasswordAreOneKey() throws Exception {
        HttpRequests gate = gate();
        String expected = key(gate, CANONICAL);
        for (String spelling : new String[] {
                "Basic YWxpY2U6cHc=x", "Basic YWxpY2U6cHc=anything-at-all", "Basic YWxpY2U6cHc==",
                "Basic YWxpY2U6cHc=====", "Basic YWxp Y2U6cHc=", "Basic Y W x p Y 2 U 6 c H c",
                "Basic YWxp\tY2U6cHc=", "Basic YWxpY2U6cHc=\tx"}) {
            assertEquals(ALICE, undertowDecodes(spelling.substring("Basic ".length())), spelling);
            assertEquals(expected, key(gate, spelling), spelling);
        }
    }

    /**
     * FlexBase64 also decodes a token whose digits leave one over after the last group of four:
     * the dangling digit (6 bits, no whole byte) is dropped, where java.util.Base64 refuses the
     * token. A user:password of a multiple of 3 bytes ({@code alice:pwd}, 12 digits) then has a
     * 13th digit of the client's choosing, and spaces anywhere: Undertow authenticates each as
     * alice, and the agent, finding no Base64 in it, kept each as sent, a fresh key apiece.
     */
    @Test
    void aDanglingDigitUndertowDropsIsNoFreshKey() throws Exception {
        HttpRequests gate = gate();
        String expected = key(gate, "Basic YWxpY2U6cHdk");
        for (String spelling : new String[] {
                "Basic YWxpY2U6cHdkX", "Basic YWxpY2U6cHdkQ", "Basic YWxp Y2U6cHdkX", "Basic YWxpY2U6 cHdkX",
                "Basic Y W x p Y 2 U 6 c H d k /"}) {
            assertEquals("alice:pwd", undertowDecodes(spelling.substring("Basic ".length())), spelling);
            assertEquals(expected, key(gate, spelling), spelling);
        }
    }

    /**
     * Undertow authenticates with the first line that is Basic, whatever comes before it; other
     * containers and Spring Security read the first line. A request with several lines is not
     * one credential spelled one way: varying a line it does not key on must not give a fresh key.
     */
    @Test
    void anotherAuthorizationLineDoesNotMakeAFreshKey() throws Exception {
        HttpRequests gate = gate();
        String first = key(gate, "Bearer random-1", CANONICAL);
        assertEquals(first, key(gate, "Bearer random-2", CANONICAL));
        assertEquals(first, key(gate, CANONICAL, "Basic cmFuZG9tOjE="));
        assertEquals(first, key(gate, CANONICAL, "Basic cmFuZG9tOjI="));
    }

    private static HttpRequests gate() throws Exception {
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "rules:",
                "  - name: per-credential",
                "    match: {http: {path: /secure/**}}",
                "    key: header:Authorization",
                "    limit: 3",
                "    window: 1h",
                ""), "rules.yaml", Path.of("."), name -> null);
        List<ActiveRule> http = new ArrayList<>();
        for (RuleConfig config : ruleSet.rules()) {
            http.add(new ActiveRule(config, 1000));
        }
        HttpRules httpRules = new HttpRules(ruleSet, http, n -> null);
        return new HttpRequests(() -> httpRules);
    }

    private static String key(HttpRequests gate, String... lines) throws Exception {
        RequestContext.set(null);
        FakeServlet servlet = new FakeServlet("jakarta.servlet").header("Authorization", lines);
        servlet.uri = "/about";
        return ((RequestKeys) gate.enter(servlet.request, servlet.response)).header("Authorization");
    }
}
