package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.RateLimitExceededException;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.config.ConfigLoader;
import dev.ratelimit.config.RuleConfig;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Limiter;
import dev.ratelimit.limit.RequestKeys;
import dev.ratelimit.limit.StoreUnavailableException;
import dev.ratelimit.limit.ThreadCalls;
import dev.ratelimit.testing.LogCapture;
import dev.ratelimit.testing.WindowGuard;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.servlet.ServletException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The HTTP gate's decisions, through the real javax and jakarta servlet APIs. */
class HttpRequestsTest {
    private static final String TOKEN = "unit-test-internal-token-0123456789";

    private final Map<String, ActiveRule> rules = new LinkedHashMap<>();
    private HttpRequests gate;

    @BeforeEach
    void load() throws Exception {
        WindowGuard.awayFromBoundary(3_600_000, 10_000);
        useRules("version: 1",
                "exempt:",
                "  header: X-Internal-Token",
                "  tokens: [\"" + TOKEN + "\"]",
                "rules:",
                "  - name: api",
                "    match: {http: {path: /api/**}}",
                "    key: client-ip",
                "    limit: 2",
                "    window: 1h",
                "  - name: by-user",
                "    match: {http: {path: /api/users/**}}",
                "    key: principal",
                "    limit: 1",
                "    window: 1h",
                "  - name: counted-always",
                "    match: {http: {path: /api/strict/**}}",
                "    key: client-ip",
                "    limit: 1",
                "    window: 1h",
                "    exempt: false",
                "");
    }

    /** The gate under the rule file of {@code lines}, its rules in {@link #rules} by name. */
    private void useRules(String... lines) throws Exception {
        rules.clear();
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n", lines), "rules.yaml", Path.of("."), name -> null);
        List<ActiveRule> http = new ArrayList<>();
        for (RuleConfig config : ruleSet.rules()) {
            ActiveRule rule = new ActiveRule(config, 1000);
            rules.put(config.name(), rule);
            http.add(rule);
        }
        HttpRules httpRules = new HttpRules(ruleSet, http, rules::get);
        gate = new HttpRequests(() -> httpRules);
    }

    /**
     * Undertow maps a request without resolving its dot segments or decoding %2F: it serves
     * {@code /api/users/u1/../../..} with the servlet at {@code /api/users/*} (path info
     * {@code /u1/../../..}). The URI alone, resolved, is {@code /}: no rule once counted it, and a
     * client reached the handler {@code /api/users/**} covers as often as it liked. The path the
     * container routed counts too.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aPathTheContainerRoutedUnresolvedIsCountedByTheRuleOfTheHandlerItReached(String namespace) throws Exception {
        ActiveRule byUser = rules.get("by-user");
        for (String[] request : new String[][] {
                {"/api/users/u1/../../..", "/api/users", "/u1/../../.."},
                {"/api/users/%2e%2e", "/api/users", "/.."},
                {"/api/users/a%2F..%2F..%2F..", "/api/users", "/a%2F..%2F..%2F.."}}) {
            FakeServlet servlet = new FakeServlet(namespace);
            servlet.principal = "alice";
            // an address of its own each: the rule before by-user (api, per address) never refuses
            servlet.remoteAddr = "192.0.2." + (40 + request[0].length());
            servlet.uri = request[0];
            servlet.servletPath = request[1];
            servlet.pathInfo = request[2];
            serve(servlet);
        }
        assertEquals(1, byUser.metrics().allowed(), "the first is allowed and counted");
        assertEquals(2, byUser.metrics().rejected(), "the others are over alice's limit of 1");
    }

    /**
     * A servlet or DispatcherServlet mapped at {@code /} (Tomcat, Jetty, Spring Boot) gives the
     * path as the container has it, trailing slash kept: {@code /api/users/} has servlet path
     * {@code /api/users/}; a servlet at {@code /api/users/*} gives path info {@code /}. The
     * normalised path is {@code /api/users}, which a rule for {@code /api/users/*} does not cover;
     * the routed path must not make the trailing slash count as a user (the README: /api/ and
     * /api are the same path).
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aTrailingSlashInTheRoutedPathIsNotASegmentOfItsOwn(String namespace) throws Exception {
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "rules:",
                "  - name: one-user",
                "    match: {http: {path: /api/users/*}}",
                "    key: client-ip",
                "    limit: 100",
                "    window: 1h",
                ""), "rules.yaml", Path.of("."), name -> null);
        ActiveRule oneUser = new ActiveRule(ruleSet.rules().get(0), 1000);
        HttpRules httpRules = new HttpRules(ruleSet, List.of(oneUser), name -> oneUser);
        HttpRequests own = new HttpRequests(() -> httpRules);
        for (String[] request : new String[][] {
                {"/api/users", "/api/users", null},
                {"/api/users/", "/api/users/", null},
                {"/api/users/", "/api/users", "/"},
                {"/api/users//", "/api/users//", null}}) {
            FakeServlet servlet = new FakeServlet(namespace);
            servlet.uri = request[0];
            servlet.servletPath = request[1];
            servlet.pathInfo = request[2];
            Object facts = own.enter(servlet.request, servlet.response);
            if (facts != null) {
                own.exit(servlet.request, servlet.response, facts, null);
            }
            RequestContext.set(null);
        }
        assertEquals(0, oneUser.metrics().allowed(), "/api/users/ is /api/users, not a user named ''");
    }

    /**
     * A container may refuse to give a servlet path (Jetty 10 and 11 throw for an ambiguous URI
     * they let through; an application's own request class may throw): the request is still
     * matched by its URI, and the failure is an agent error, not a request every rule missed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aServletPathThatCannotBeReadLeavesTheRequestMatchedByItsUri(String namespace) throws Exception {
        long errors = RateLimitBridge.agentErrors();
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/api/x";
        servlet.remoteAddr = "192.0.2.41";
        servlet.servletPathFailure = new IllegalArgumentException("Ambiguous URI encoding");
        Object facts = gate.enter(servlet.request, servlet.response);
        if (facts != null) {
            gate.exit(servlet.request, servlet.response, facts, null);
        }
        assertEquals(1, rules.get("api").metrics().allowed(), "counted by the rule of its URI");
        assertEquals(errors + 1, RateLimitBridge.agentErrors(), "the failure is counted");
    }

    @AfterEach
    void clearContext() {
        RequestContext.set(null);
        RequestContext.slot().calls = null;
    }

    /** One request through enter and exit, as the advice does; returns the facts. */
    private Object serve(FakeServlet servlet) {
        Object facts = gate.enter(servlet.request, servlet.response);
        if (facts != null) {
            gate.exit(servlet.request, servlet.response, facts, null);
        }
        return facts;
    }

    /**
     * Tomcat's RemoteIpValve (which Spring Boot installs on Kubernetes and with
     * forward-headers-strategy=native) replaces the remote address from X-Forwarded-For before the
     * agent sees it, and marks each request: client-ip then keys on the address it chose, whatever
     * the rule file trusts (review). One warning names the setting; a container without the valve
     * gets none. Only the first requests are looked at.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aContainerThatRewritesTheClientAddressIsWarnedOfOnce(String namespace) throws Exception {
        ContainerForwarding.reset();
        try (LogCapture log = LogCapture.open()) {
            FakeServlet plain = new FakeServlet(namespace);
            plain.uri = "/api/plain";
            serve(plain);
            assertEquals(List.of(), log.messages(java.util.logging.Level.WARNING));
            for (int i = 0; i < 3; i++) {
                FakeServlet rewritten = new FakeServlet(namespace);
                rewritten.uri = "/api/rewritten";
                rewritten.remoteAddr = "192.0.2." + (10 + i);
                rewritten.attributes.put(ContainerForwarding.TOMCAT_REWRITE, rewritten.remoteAddr);
                serve(rewritten);
            }
            List<String> warnings = log.messages(java.util.logging.Level.WARNING);
            assertEquals(1, warnings.size(), warnings::toString);
            assertTrue(warnings.get(0).contains("runs Tomcat's RemoteIpValve"), warnings.get(0));
            assertTrue(warnings.get(0).contains("server.forward-headers-strategy=none"), warnings.get(0));
            assertFalse(warnings.get(0).contains("192.0.2."), "no client address: " + warnings.get(0));
        } finally {
            ContainerForwarding.reset();
        }
    }

    /** The limited calls of a thread, as MethodSites keeps them: here only a depth. */
    private static final class Calls implements ThreadCalls {
        int depth;

        @Override
        public int depth() {
            return depth;
        }

        @Override
        public void truncate(int depth) {
            this.depth = Math.min(this.depth, depth);
        }
    }

    /**
     * A limited call whose exit advice did not run (a debugger popped its frame, an error inside
     * the agent's own unwinding) stays on the thread's stack of calls; when it was the outermost,
     * no later scope mends it, and every later call under its rule and key on that pooled thread
     * looked nested and was never counted. The end of the request cuts the stack back to the
     * depth the request began at; a request served inside a limited call keeps that call.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void theEndOfARequestCutsBackTheLimitedCallsItLeftOpen(String namespace) throws Exception {
        Calls calls = new Calls();
        RequestContext.slot().calls = calls;
        FakeServlet first = new FakeServlet(namespace);
        Object facts = gate.enter(first.request, first.response);
        calls.depth = 2; // a limited call and one inside it, neither closed
        gate.exit(first.request, first.response, facts, null);
        assertEquals(0, calls.depth);

        calls.depth = 1; // this request is served inside a limited call (an in-process dispatch)
        FakeServlet inner = new FakeServlet(namespace);
        facts = gate.enter(inner.request, inner.response);
        calls.depth = 3;
        gate.exit(inner.request, inner.response, facts, null);
        assertEquals(1, calls.depth, "the call the request was served in is still in progress");
    }

    /**
     * A request served inside a limited call of another request (a batch endpoint's
     * sub-request): when the inner one ends, the outer one's depth is back in force, and the
     * outer one's end closes the call it left open.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void theEndOfARequestServedInsideAnotherGivesTheOuterOneItsDepthBack(String namespace) throws Exception {
        Calls calls = new Calls();
        RequestContext.slot().calls = calls;
        FakeServlet outer = new FakeServlet(namespace);
        Object outerFacts = gate.enter(outer.request, outer.response);
        calls.depth = 1;
        FakeServlet nested = new FakeServlet(namespace);
        Object nestedFacts = gate.enter(nested.request, nested.response);
        calls.depth = 2;
        gate.exit(nested.request, nested.response, nestedFacts, null);
        assertEquals(1, calls.depth);
        gate.exit(outer.request, outer.response, outerFacts, null);
        assertEquals(0, calls.depth);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aForgedTokenIsCountedAndLimitedAndAValidOneIsNotCounted(String namespace) throws Exception {
        ActiveRule api = rules.get("api");
        for (int i = 0; i < 2; i++) {
            assertNotSame(RateLimitBridge.REJECTED, serve(new FakeServlet(namespace).header("X-Internal-Token", "forged")));
        }
        FakeServlet third = new FakeServlet(namespace).header("X-Internal-Token", "forged");
        assertSame(RateLimitBridge.REJECTED, serve(third));
        assertEquals(429, third.status);
        assertEquals(3, api.metrics().forgedTokens());
        assertEquals(2, api.metrics().allowed());
        assertEquals(1, api.metrics().rejected());
        for (int i = 0; i < 5; i++) {
            assertNotSame(RateLimitBridge.REJECTED, serve(new FakeServlet(namespace).header("X-Internal-Token", TOKEN)));
        }
        assertEquals(5, api.metrics().exempted());
        assertEquals(2, api.metrics().allowed());
    }

    /**
     * The request was counted as rejected; writing the 429 then fails (the client reset the
     * connection). The application must still not run: it once did, on a response already reset,
     * and a client could pass any limit by resetting its connections.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRejectionThatCannotBeWrittenStillSkipsTheApplication(String namespace) throws Exception {
        serve(new FakeServlet(namespace));
        serve(new FakeServlet(namespace));
        FakeServlet gone = new FakeServlet(namespace);
        gone.clientGone = true;
        long errors = RateLimitBridge.agentErrors();
        assertSame(RateLimitBridge.REJECTED, gate.enter(gone.request, gone.response));
        assertEquals(1, rules.get("api").metrics().rejected());
        assertEquals(errors + 1, RateLimitBridge.agentErrors(), "the failed write is counted");
        assertNull(RequestContext.current());
    }

    /**
     * A rule may key on the token header (to count each internal caller apart, with exempt:
     * false). Keys are kept in the clear, in memory and in Redis: such a key is the token's
     * SHA-256, never the token. It once was the token itself.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aKeyReadFromTheTokenHeaderIsTheTokensDigest(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace).header("X-Internal-Token", TOKEN).header("X-Tenant", "acme");
        Object facts = gate.enter(servlet.request, servlet.response);
        RequestKeys keys = (RequestKeys) facts;
        String key = keys.header("X-Internal-Token");
        assertTrue(key.startsWith("sha256:") && key.length() == "sha256:".length() + 64, key);
        assertFalse(key.contains(TOKEN));
        assertEquals(key, keys.header("x-internal-token"), "header names are case-insensitive");
        assertEquals("acme", keys.header("X-Tenant"));
        FakeServlet other = new FakeServlet(namespace).header("X-Internal-Token", "forged-token-value-1234");
        RequestContext.set(null);
        RequestKeys otherKeys = (RequestKeys) gate.enter(other.request, other.response);
        assertNotEquals(key, otherKeys.header("X-Internal-Token"), "each token its own key");
    }

    /**
     * A rule keyed on {@code header:Authorization} counts per credential: the key is the
     * credential's SHA-256, never the credential (keys are kept in the clear, in memory and in
     * Redis), and one credential is one key however the client spells its scheme and the spaces
     * after it, which RFC 9110 lets it choose: keyed as sent, {@code bearer x} and
     * {@code BEARER x} were budgets of their own beside {@code Bearer x}.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aKeyReadFromAnAuthorizationHeaderIsOneDigestPerCredential(String namespace) throws Exception {
        String credential = "eyJhbGciOi.J9-secret_Value~";
        String key = authorizationKey(namespace, "Authorization", "Bearer " + credential);
        assertTrue(key.startsWith("sha256:") && key.length() == "sha256:".length() + 64, key);
        assertFalse(key.contains(credential), key);
        for (String spelling : List.of("bearer " + credential, "BEARER " + credential, "bEaReR   " + credential,
                "Bearer\t" + credential, " Bearer " + credential + " ")) {
            assertEquals(key, authorizationKey(namespace, "Authorization", spelling), spelling);
            assertEquals(key, authorizationKey(namespace, "authorization", spelling), "names are case-insensitive");
        }
        assertNotEquals(key, authorizationKey(namespace, "Authorization", "Bearer " + credential.toUpperCase()),
                "the credential itself is case-sensitive");
        assertNotEquals(key, authorizationKey(namespace, "Authorization", "Basic " + credential), "another scheme");
        assertNotEquals(key, authorizationKey(namespace, "Authorization", "Bearer" + credential), "no space: a scheme");
        assertEquals(key, authorizationKey(namespace, "Proxy-Authorization", "bearer " + credential),
                "Proxy-Authorization alike");
        assertEquals(authorizationKey(namespace, "Authorization", "Negotiate"),
                authorizationKey(namespace, "Authorization", "NEGOTIATE "), "a scheme alone");
        RequestContext.set(null);
        FakeServlet plain = new FakeServlet(namespace).header("X-Tenant", "Acme  Corp");
        plain.uri = "/about";
        assertEquals("Acme  Corp", ((RequestKeys) gate.enter(plain.request, plain.response)).header("X-Tenant"),
                "other headers are keyed as sent");
    }

    private String authorizationKey(String namespace, String name, String value) throws Exception {
        RequestContext.set(null);
        FakeServlet servlet = new FakeServlet(namespace).header(name, value);
        servlet.uri = "/about"; // no rule's path: served, never refused, however often asked
        return ((RequestKeys) gate.enter(servlet.request, servlet.response)).header(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRuleWithExemptFalseCountsInternalCallersToo(String namespace) throws Exception {
        FakeServlet first = new FakeServlet(namespace).header("X-Internal-Token", TOKEN);
        first.uri = "/api/strict/x";
        assertNotSame(RateLimitBridge.REJECTED, serve(first));
        FakeServlet second = new FakeServlet(namespace).header("X-Internal-Token", TOKEN);
        second.uri = "/api/strict/x";
        assertSame(RateLimitBridge.REJECTED, serve(second));
        assertTrue(second.body().contains("\"violated-policies\":[\"counted-always\"]"), second.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void principalKeysCountEachUserApart(String namespace) throws Exception {
        for (String user : List.of("ann", "bob")) {
            FakeServlet first = new FakeServlet(namespace);
            first.uri = "/api/users/1";
            first.remoteAddr = "192.0.2." + (user.equals("ann") ? 20 : 21);
            first.principal = user;
            assertNotSame(RateLimitBridge.REJECTED, serve(first), user);
            FakeServlet second = new FakeServlet(namespace);
            second.uri = "/api/users/1";
            second.remoteAddr = "192.0.2." + (user.equals("ann") ? 22 : 23);
            second.principal = user;
            assertSame(RateLimitBridge.REJECTED, serve(second), user);
        }
    }

    /**
     * A rule whose key cannot be read (the application's principal throws from getName) lets the
     * request through that rule alone, counted as an agent error; the other rules that match still
     * decide. The error once ended the whole decision, and the bridge let every such request
     * through every rule.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRuleWhoseKeyFailsLetsTheRequestThroughThatRuleOnly(String namespace) throws Exception {
        long errors = RateLimitBridge.agentErrors();
        List<Object> outcomes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            FakeServlet servlet = new FakeServlet(namespace);
            servlet.uri = "/api/users/1";
            servlet.remoteAddr = "192.0.2.30";
            servlet.principalFailure = new StackOverflowError();
            outcomes.add(serve(servlet));
        }
        assertNotSame(RateLimitBridge.REJECTED, outcomes.get(0));
        assertNotSame(RateLimitBridge.REJECTED, outcomes.get(1));
        assertSame(RateLimitBridge.REJECTED, outcomes.get(2), "the client-ip rule still limits");
        // the third is refused by api, the rule before by-user: by-user does not read its key then
        assertEquals(errors + 2, RateLimitBridge.agentErrors(), "each failed key is counted");
        assertEquals(2, rules.get("api").metrics().allowed());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRejectionOfACommittedResponsePassesAndIsCounted(String namespace) throws Exception {
        serve(new FakeServlet(namespace));
        serve(new FakeServlet(namespace));
        FakeServlet committed = new FakeServlet(namespace);
        committed.committed = true;
        assertNotSame(RateLimitBridge.REJECTED, serve(committed));
        assertEquals(200, committed.status);
        assertEquals(1, rules.get("api").metrics().passedCommitted());
    }

    /** Only the rule the request was over counts it as passed for a committed response, not every rule that matched. */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aCommittedResponseIsCountedByTheRuleItWasOverOnly(String namespace) throws Exception {
        FakeServlet first = new FakeServlet(namespace);
        first.uri = "/api/users/1";
        first.principal = "dave";
        first.remoteAddr = "192.0.2.60";
        serve(first);
        // api (per address, the first rule) allows it; by-user (dave's limit of 1) is over
        FakeServlet committed = new FakeServlet(namespace);
        committed.committed = true;
        committed.uri = "/api/users/1";
        committed.principal = "dave";
        committed.remoteAddr = "192.0.2.61";
        assertNotSame(RateLimitBridge.REJECTED, serve(committed));
        assertEquals(1, rules.get("by-user").metrics().passedCommitted());
        assertEquals(0, rules.get("api").metrics().passedCommitted(), "api allowed it");
        assertEquals(2, rules.get("api").metrics().allowed());
    }

    /**
     * A request the first rule refuses, whose response is committed already, passes anyway: the
     * rules after it count it, as the request they see, and one of them that is over too counts it
     * as passed committed. Before, they skipped it as if it had been answered 429 (the review of
     * the thirty-fifth round's commits).
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aCommittedResponseRefusedByOneRuleIsCountedByTheRulesAfterIt(String namespace) throws Exception {
        for (int i = 0; i < 2; i++) {
            FakeServlet servlet = new FakeServlet(namespace);
            servlet.uri = "/api/users/" + i;
            servlet.principal = "user-" + i;
            servlet.remoteAddr = "192.0.2.70";
            assertNotSame(RateLimitBridge.REJECTED, serve(servlet));
        }
        // api (two per address) is over for 192.0.2.70; erin has her one call left under by-user
        FakeServlet committed = new FakeServlet(namespace);
        committed.committed = true;
        committed.uri = "/api/users/9";
        committed.principal = "erin";
        committed.remoteAddr = "192.0.2.70";
        assertNotSame(RateLimitBridge.REJECTED, serve(committed));
        assertEquals(1, rules.get("api").metrics().passedCommitted());
        assertEquals(3, rules.get("by-user").metrics().allowed(), "by-user counted the request that passed");
        // erin's one call is used: a committed request of hers, refused by both, counts under both
        FakeServlet again = new FakeServlet(namespace);
        again.committed = true;
        again.uri = "/api/users/9";
        again.principal = "erin";
        again.remoteAddr = "192.0.2.70";
        assertNotSame(RateLimitBridge.REJECTED, serve(again));
        assertEquals(2, rules.get("api").metrics().passedCommitted());
        assertEquals(1, rules.get("by-user").metrics().passedCommitted());
        assertEquals(3, rules.get("by-user").metrics().allowed());
        // and one not committed is refused by api alone, by-user not counting it
        FakeServlet refused = new FakeServlet(namespace);
        refused.uri = "/api/users/9";
        refused.principal = "frank";
        refused.remoteAddr = "192.0.2.70";
        assertSame(RateLimitBridge.REJECTED, serve(refused));
        assertEquals(3, rules.get("by-user").metrics().allowed());
        assertEquals(1, rules.get("by-user").metrics().rejected(), "erin's second only");
    }

    /**
     * A request refused by one rule is not counted by the rules after it, as a method's calls are
     * not: counted by every rule its path matched, a client over its own limit (per address, the
     * first rule) used up the cap every client shares (the second) with requests that never
     * reached the application, and the next client was refused by the cap (the review of the
     * HTTP path, thirty-fifth round).
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRequestRefusedByOneRuleIsNotCountedByTheRulesAfterIt(String namespace) throws Exception {
        useRules("version: 1",
                "rules:",
                "  - name: per-ip",
                "    match: {http: {path: /api/**}}",
                "    key: client-ip",
                "    limit: 2",
                "    window: 1h",
                "  - name: global-cap",
                "    match: {http: {path: /api/**}}",
                "    key: global",
                "    limit: 10",
                "    window: 1h",
                "");
        List<Object> outcomes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            FakeServlet servlet = new FakeServlet(namespace);
            servlet.remoteAddr = "203.0.113.1";
            outcomes.add(serve(servlet));
        }
        assertEquals(2, outcomes.stream().filter(o -> o != RateLimitBridge.REJECTED).count());
        assertEquals(2, rules.get("global-cap").metrics().allowed(), "the cap counted the two it let through");
        assertEquals(0, rules.get("global-cap").metrics().rejected());
        assertEquals(18, rules.get("per-ip").metrics().rejected());
        FakeServlet next = new FakeServlet(namespace);
        next.remoteAddr = "198.51.100.2";
        assertNotSame(RateLimitBridge.REJECTED, serve(next), "another client still has the cap");
        String state = next.responseHeaders.get("RateLimit");
        assertTrue(state.matches("\"per-ip\";r=1;t=\\d+, \"global-cap\";r=7;t=\\d+"), state);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void onlyTheFirstEntryOfAnInitialDispatchActs(String namespace) throws Exception {
        FakeServlet forward = new FakeServlet(namespace);
        forward.dispatcherType = "FORWARD";
        assertNull(gate.enter(forward.request, forward.response));
        FakeServlet request = new FakeServlet(namespace);
        Object facts = gate.enter(request.request, request.response);
        assertNotNull(facts);
        assertSame(facts, RequestContext.current(), "method rules see the request while it is served");
        assertNull(gate.enter(request.request, request.response), "a nested entry does nothing");
        assertFalse(gate.exit(request.request, request.response, facts, null));
        assertNull(RequestContext.current());
        assertEquals(1, rules.get("api").metrics().allowed());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void onlyARequestDispatchIsCounted(String namespace) throws Exception {
        for (String type : List.of("FORWARD", "INCLUDE", "ERROR", "ASYNC")) {
            FakeServlet dispatch = new FakeServlet(namespace);
            dispatch.dispatcherType = type;
            assertNull(gate.enter(dispatch.request, dispatch.response), type);
        }
        assertEquals(0, rules.get("api").metrics().allowed());
        FakeServlet plain = new FakeServlet(namespace);
        assertNotNull(serve(plain));
        // a container that answers null (none should) is limited like a plain request
        FakeServlet unknown = new FakeServlet(namespace);
        unknown.dispatcherType = null;
        assertNotNull(serve(unknown));
        assertEquals(2, rules.get("api").metrics().allowed());
    }

    /**
     * An async (or error) dispatch of a request counted already is not counted again, but method
     * rules called in it see the request, and their rejection becomes a 429 at its exit. It once
     * left them no request: every client shared the key "-", the token exempted nothing, and a
     * rejection reached the container as a 500.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aLaterDispatchOfACountedRequestIsNotCountedButMethodRulesSeeIt(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace).header("X-Internal-Token", TOKEN);
        servlet.remoteAddr = "192.0.2.77";
        Object first = gate.enter(servlet.request, servlet.response);
        assertNotNull(first);
        assertFalse(gate.exit(servlet.request, servlet.response, first, null));
        assertNull(RequestContext.current());
        for (String type : List.of("ASYNC", "ERROR")) {
            FakeServlet dispatch = servlet.wrapper();
            dispatch.dispatcherType = type;
            Object facts = gate.enter(dispatch.request, dispatch.response);
            assertSame(first, facts, type);
            RequestKeys keys = (RequestKeys) RequestContext.current();
            assertSame(first, keys, type + ": method rules see the request");
            assertEquals("192.0.2.77", keys.clientIp());
            assertTrue(keys.exempt(), type + ": the request's token exempts method rules");
            assertNull(gate.enter(dispatch.request, dispatch.response), "a nested entry of the dispatch does nothing");
            assertTrue(gate.exit(dispatch.request, dispatch.response, facts,
                    new RateLimitExceededException("api", Duration.ofMillis(1500))), type);
            assertEquals(429, dispatch.status, type);
            assertNull(RequestContext.current(), type);
        }
        assertEquals(1, rules.get("api").metrics().exempted());
        assertEquals(0, rules.get("api").metrics().allowed());
        // a dispatch of a request never counted (the container's own) is left alone
        FakeServlet unseen = new FakeServlet(namespace);
        unseen.dispatcherType = "ASYNC";
        assertNull(gate.enter(unseen.request, unseen.response));
        assertNull(RequestContext.current());
    }

    /**
     * A filter that authenticates wraps the request to answer the user (Spring Security does):
     * method rules keyed by principal read it from the innermost request an entry point was
     * given, not from the container's. They once read "-" for every user.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void methodRulesReadThePrincipalFromTheInnermostWrapper(String namespace) throws Exception {
        FakeServlet container = new FakeServlet(namespace);
        container.uri = "/other";
        Object facts = gate.enter(container.request, container.response);
        assertNull(((RequestKeys) facts).principal());
        FakeServlet authenticated = container.wrapper();
        authenticated.principal = "ann";
        assertNull(gate.enter(authenticated.request, authenticated.response), "a wrapper's entry counts nothing");
        assertEquals("ann", ((RequestKeys) RequestContext.current()).principal());
        gate.exit(container.request, container.response, facts, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void behindATrustedProxyTheForwardingHeadersNameTheClient(String namespace) throws Exception {
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "client:",
                "  trusted-proxies: [192.0.2.10/32]",
                "rules:",
                "  - name: api",
                "    match: {http: {path: /api/**}}",
                "    key: client-ip",
                "    limit: 100",
                "    window: 1h",
                ""), "rules.yaml", Path.of("."), name -> null);
        HttpRules httpRules = new HttpRules(ruleSet,
                List.of(new ActiveRule(ruleSet.rules().get(0), 1000)), name -> null);
        HttpRequests proxied = new HttpRequests(() -> httpRules);
        Map<String, String> seen = new LinkedHashMap<>();
        for (String[] request : List.of(
                new String[] {"none", null, null},
                new String[] {"X-Forwarded-For", "X-Forwarded-For", "198.51.100.7"},
                new String[] {"Forwarded", "Forwarded", "for=198.51.100.8"},
                new String[] {"both lines", "X-Forwarded-For", "203.0.113.9, 198.51.100.9"})) {
            FakeServlet servlet = new FakeServlet(namespace);
            if (request[1] != null) {
                servlet.header(request[1], request[2]);
            }
            RequestKeys facts = (RequestKeys) proxied.enter(servlet.request, servlet.response);
            seen.put(request[0], facts.clientIp());
            proxied.exit(servlet.request, servlet.response, facts, null);
        }
        assertEquals(Map.of("none", "192.0.2.10", "X-Forwarded-For", "198.51.100.7", "Forwarded", "198.51.100.8",
                "both lines", "198.51.100.9"), seen);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aNestedEntryOfTheSameRequestObjectReadsNothing(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        Object facts = gate.enter(servlet.request, servlet.response);
        int calls = servlet.requestCalls;
        assertNull(gate.enter(servlet.request, servlet.response));
        assertEquals(calls, servlet.requestCalls, "the request's facts in the context are enough");
        gate.exit(servlet.request, servlet.response, facts, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void anotherRequestObjectWhileOneIsServedIsCounted(String namespace) throws Exception {
        FakeServlet outer = new FakeServlet(namespace);
        Object outerFacts = gate.enter(outer.request, outer.response);
        FakeServlet other = new FakeServlet(namespace);
        Object otherFacts = gate.enter(other.request, other.response);
        assertNotNull(otherFacts, "not the request being served, nor a wrapper of it");
        assertNotSame(outerFacts, RequestContext.current());
        gate.exit(other.request, other.response, otherFacts, null);
        assertSame(outerFacts, RequestContext.current(), "the thread serves the outer request again");
        gate.exit(outer.request, outer.response, outerFacts, null);
        assertNull(RequestContext.current());
        assertEquals(2, rules.get("api").metrics().allowed());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRequestThatEndsInAnApplicationExceptionLeavesNothingBehind(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        Object facts = gate.enter(servlet.request, servlet.response);
        assertFalse(gate.exit(servlet.request, servlet.response, facts, new IllegalStateException("the app failed")));
        assertNull(RequestContext.current());
        servlet.attributes.clear(); // the container reuses the object for the next request
        assertNotNull(serve(servlet));
        assertEquals(2, rules.get("api").metrics().allowed());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aNestedEntryWithTheRequestWrappedDoesNothingEither(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        Object facts = gate.enter(servlet.request, servlet.response);
        assertNotNull(facts);
        Class<?> requestType = Class.forName(namespace + ".http.HttpServletRequest");
        Object wrapped = Class.forName(namespace + ".http.HttpServletRequestWrapper").getConstructor(requestType)
                .newInstance(servlet.request);
        assertNull(gate.enter(wrapped, servlet.response), "a filter's wrapper is still the same request");
        assertFalse(gate.exit(servlet.request, servlet.response, facts, null));
        assertEquals(1, rules.get("api").metrics().allowed());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRequestObjectTheContainerReusesIsANewRequestOnceTheFirstHasLeft(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        assertNotNull(serve(servlet));
        servlet.attributes.clear(); // what a container's recycling of the object does
        assertNotNull(serve(servlet));
        assertEquals(2, rules.get("api").metrics().allowed());
        assertSame(RateLimitBridge.REJECTED, serve(new FakeServlet(namespace)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void anAllowedResponseCarriesTheFieldsOfEveryMatchingRule(String namespace) throws Exception {
        FakeServlet one = new FakeServlet(namespace);
        long before = System.currentTimeMillis() - dev.ratelimit.limit.CoarseClock.tickMillis();
        serve(one);
        long after = System.currentTimeMillis();
        assertEquals("\"api\";q=2;w=3600", one.responseHeaders.get("RateLimit-Policy"));
        String state = one.responseHeaders.get("RateLimit");
        assertTrue(state.matches("\"api\";r=1;t=\\d+"), state);
        // t is the whole seconds, rounded up, until the hour's window ends as the agent's clock
        // (up to a tick behind) saw it: not the window's length, not a constant
        long t = Long.parseLong(state.substring(state.indexOf(";t=") + 3));
        long latest = (3_600_000 - before % 3_600_000 + 999) / 1000;
        long earliest = (3_600_000 - after % 3_600_000 + 999) / 1000;
        assertTrue(t >= earliest && t <= latest, "t=" + t + ", expected " + earliest + ".." + latest);
        FakeServlet two = new FakeServlet(namespace);
        two.uri = "/api/users/1";
        two.principal = "carol";
        two.remoteAddr = "192.0.2.30";
        serve(two);
        assertEquals("\"api\";q=2;w=3600, \"by-user\";q=1;w=3600", two.responseHeaders.get("RateLimit-Policy"));
        state = two.responseHeaders.get("RateLimit");
        assertTrue(state.matches("\"api\";r=1;t=\\d+, \"by-user\";r=0;t=\\d+"), state);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void anEmptyTokenHeaderIsForgedAndNoHeaderIsNot(String namespace) throws Exception {
        serve(new FakeServlet(namespace).header("X-Internal-Token", ""));
        serve(new FakeServlet(namespace));
        assertEquals(1, rules.get("api").metrics().forgedTokens());
        assertEquals(2, rules.get("api").metrics().allowed());
    }

    /**
     * After startAsync() the 429 is written and the asynchronous request completed: nothing else
     * would complete it, and Jetty and Tomcat held it until the async timeout (30 s), whether the
     * 429 was written and the exception swallowed or the exception passed on.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRejectionAfterStartAsyncIsA429AndCompletesTheRequest(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/other";
        Object facts = gate.enter(servlet.request, servlet.response);
        servlet.asyncStarted = true;
        assertTrue(gate.exit(servlet.request, servlet.response, facts,
                new RateLimitExceededException("api", Duration.ofMillis(1500))));
        assertEquals(429, servlet.status);
        assertTrue(servlet.asyncCompleted, "the asynchronous request is completed");
        assertNull(RequestContext.current());
    }

    /**
     * An application's own rejection that says "never" ({@code ChronoUnit.FOREVER}, or seconds
     * near {@code Long.MAX_VALUE}) is a 429 with a far-off retry: the exception's constructor and
     * the gate both took the duration's {@code toMillis}, which throws past a long (the review of
     * the limit algorithms, thirty-fourth round).
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void anApplicationsRejectionThatSaysNeverIsA429(String namespace) throws Exception {
        for (Duration never : List.of(java.time.temporal.ChronoUnit.FOREVER.getDuration(), Duration.ofSeconds(Long.MAX_VALUE))) {
            FakeServlet servlet = new FakeServlet(namespace);
            servlet.uri = "/other";
            Object facts = gate.enter(servlet.request, servlet.response);
            RateLimitExceededException rejection = new RateLimitExceededException("api", never);
            assertEquals("Rate limit exceeded: rule 'api', retry after 9223372036854775807 ms", rejection.getMessage());
            assertTrue(gate.exit(servlet.request, servlet.response, facts, rejection));
            assertEquals(429, servlet.status);
            assertEquals("9223372036854776", servlet.responseHeaders.get("Retry-After"));
            assertTrue(servlet.responseHeaders.get("RateLimit").endsWith(";r=0;t=999999999999999"), servlet.responseHeaders::toString);
            assertNull(RequestContext.current());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRejectionOfASynchronousRequestCompletesNothing(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/other";
        Object facts = gate.enter(servlet.request, servlet.response);
        assertTrue(gate.exit(servlet.request, servlet.response, facts,
                new RateLimitExceededException("api", Duration.ofMillis(1500))));
        assertFalse(servlet.asyncCompleted);
    }

    /**
     * A request served inside another whose 429 cannot be written (the client went away): the
     * exception goes on, and the outer request keeps its facts. The write's failure reached the
     * bridge, which cleared the thread's request: the outer one's token no longer exempted its
     * method calls.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aFailed429OfANestedRequestLeavesTheOuterRequestItsFacts(String namespace) throws Exception {
        FakeServlet outer = new FakeServlet(namespace);
        outer.uri = "/other";
        Object outerFacts = gate.enter(outer.request, outer.response);
        FakeServlet nested = new FakeServlet(namespace);
        nested.uri = "/other";
        nested.clientGone = true;
        Object nestedFacts = gate.enter(nested.request, nested.response);
        assertFalse(gate.exit(nested.request, nested.response, nestedFacts,
                new RateLimitExceededException("api", Duration.ofMillis(1500))));
        assertSame(outerFacts, RequestContext.current(), "the outer request's facts are back");
        gate.exit(outer.request, outer.response, outerFacts, null);
        assertNull(RequestContext.current());
    }

    /**
     * A 429 is left in the response's buffer, for the container to send as the request ends, as
     * it sends the application's own responses: neither flushed nor given a Content-Length (on
     * which Jetty commits as soon as that many bytes are written). A 429 sent at once over an
     * unread request body let Jetty close the connection without saying so (HTTP review, fortieth
     * round; HttpSuiteIT on each container), at an HTTP rule's refusal and at a method rule's alike.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void a429IsLeftForTheContainerToSend(String namespace) throws Exception {
        FakeServlet servlet = null;
        for (int request = 0; request < 2; request++) {
            servlet = new FakeServlet(namespace);
            servlet.remoteAddr = "192.0.2.150";
            servlet.uri = "/api/strict/x";
            servlet.method = "POST";
            servlet.header("Content-Length", "3000000");
            serve(servlet);
        }
        assertEquals(429, servlet.status);
        assertTrue(servlet.body().contains("\"violated-policies\":[\"counted-always\"]"), servlet.body());
        assertFalse(servlet.committed, "sent at once");

        FakeServlet method = new FakeServlet(namespace);
        method.uri = "/other";
        Object facts = gate.enter(method.request, method.response);
        assertTrue(gate.exit(method.request, method.response, facts,
                new RateLimitExceededException("api", Duration.ofMillis(1500))));
        assertEquals(429, method.status);
        assertFalse(method.committed, "sent at once");
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aWrappedRejectionFromAMethodRuleBecomesA429(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/other";
        Object facts = gate.enter(servlet.request, servlet.response);
        servlet.responseHeaders.put("X-Partial", "yes");
        Throwable thrown = new ServletException("wrapped", new IllegalStateException(
                new RateLimitExceededException("api", Duration.ofMillis(1500))));
        assertTrue(gate.exit(servlet.request, servlet.response, facts, thrown));
        assertEquals(429, servlet.status);
        assertEquals("2", servlet.responseHeaders.get("Retry-After"));
        assertEquals("\"api\";q=2;w=3600", servlet.responseHeaders.get("RateLimit-Policy"));
        assertNull(servlet.responseHeaders.get("X-Partial"), "the response is replaced");
        assertTrue(servlet.body().contains("\"violated-policies\":[\"api\"]"), servlet.body());
        assertFalse(gate.exit(servlet.request, servlet.response, facts, new IllegalStateException("unrelated")));
    }

    /**
     * A method rule's rejection inside a request that HTTP rules counted: the 429's
     * RateLimit-Policy lists those rules too (each counted the request), as an HTTP rule's 429
     * does; RateLimit names only the rule that refused. The 429 replaced the response, and the
     * HTTP rules' fields with it: /api/messages under api-per-ip answered only "send-message".
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aMethodRulesRejectionListsThePoliciesOfTheHttpRulesThatCountedTheRequest(String namespace)
            throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/api/users/1";
        servlet.principal = "dave";
        Object facts = gate.enter(servlet.request, servlet.response);
        assertTrue(gate.exit(servlet.request, servlet.response, facts,
                new ServletException(new RateLimitExceededException("counted-always", Duration.ofMillis(1500)))));
        assertEquals(429, servlet.status);
        assertEquals("\"api\";q=2;w=3600, \"by-user\";q=1;w=3600, \"counted-always\";q=1;w=3600",
                servlet.responseHeaders.get("RateLimit-Policy"));
        assertEquals("\"counted-always\";r=0;t=2", servlet.responseHeaders.get("RateLimit"));
        // a rule both matched and thrown is listed once; an unknown rule adds no RateLimit field
        FakeServlet again = rejectedUnderApi(namespace, "192.0.2.31", "api");
        assertEquals("\"api\";q=2;w=3600", again.responseHeaders.get("RateLimit-Policy"));
        FakeServlet own = rejectedUnderApi(namespace, "192.0.2.32", "partner");
        assertEquals("\"api\";q=2;w=3600", own.responseHeaders.get("RateLimit-Policy"));
        assertNull(own.responseHeaders.get("RateLimit"));
    }

    /**
     * A reload between a request's start and a method rule's rejection, which made the HTTP rule
     * "api" (2 an hour) that counted the request a method rule of the same name (5 a minute): the
     * 429's RateLimit-Policy named "api" twice, with two quotas. It lists the rule as it refused,
     * once, where the request's own item was.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRuleReloadedFromHttpToMethodDuringARequestIsListedOnce(String namespace) throws Exception {
        RuleSet reloaded = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "rules:",
                "  - name: api",
                "    match: {method: com.example.Api#call}",
                "    key: global",
                "    limit: 5",
                "    window: 1m",
                ""), "rules.yaml", Path.of("."), name -> null);
        ActiveRule api = new ActiveRule(reloaded.rules().get(0), 1000);
        HttpRules before = new HttpRules(exemptOnly(), new ArrayList<>(rules.values()), rules::get);
        HttpRules after = new HttpRules(reloaded, List.of(), name -> name.equals("api") ? api : null);
        java.util.concurrent.atomic.AtomicReference<HttpRules> current = new java.util.concurrent.atomic.AtomicReference<>(before);
        HttpRequests requests = new HttpRequests(current::get);
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/api/users/1";
        servlet.principal = "erin";
        Object facts = requests.enter(servlet.request, servlet.response);
        current.set(after);
        assertTrue(requests.exit(servlet.request, servlet.response, facts,
                new RateLimitExceededException("api", Duration.ofMillis(1500))));
        assertEquals(429, servlet.status);
        assertEquals("\"api\";q=5;w=60, \"by-user\";q=1;w=3600", servlet.responseHeaders.get("RateLimit-Policy"));
        assertEquals("\"api\";r=0;t=2", servlet.responseHeaders.get("RateLimit"));
    }

    /** The policy items of a rejection: the request's HTTP rules', and the refusing rule's once, by item name. */
    @org.junit.jupiter.api.Test
    void aRefusingRulesPolicyItemsReplaceTheRequestsItemsOfTheSameName() {
        assertEquals("\"a\";q=1;w=1", HttpRequests.withPolicy(null, "\"a\";q=1;w=1"));
        assertEquals("\"a\";q=1;w=1", HttpRequests.withPolicy("\"a\";q=1;w=1", ""));
        assertEquals("\"a\";q=1;w=1, \"b\";q=2;w=1", HttpRequests.withPolicy("\"a\";q=1;w=1", "\"b\";q=2;w=1"));
        assertEquals("\"a\";q=1;w=1, \"b\";q=2;w=1",
                HttpRequests.withPolicy("\"a\";q=1;w=1, \"b\";q=2;w=1", "\"b\";q=2;w=1"));
        assertEquals("\"a\";q=7;w=60, \"b\";q=2;w=1",
                HttpRequests.withPolicy("\"a\";q=1;w=1, \"b\";q=2;w=1", "\"a\";q=7;w=60"));
        // a name that begins another's is another policy
        assertEquals("\"a-v2\";q=1;w=1, \"a\";q=3;w=1", HttpRequests.withPolicy("\"a-v2\";q=1;w=1", "\"a\";q=3;w=1"));
        // a rule of two limits, both items the request's: both replaced, in the first's place
        assertEquals("\"x\";q=9;w=1, \"r-1s\";q=3;w=1, \"r-1h\";q=50;w=3600",
                HttpRequests.withPolicy("\"x\";q=9;w=1, \"r-1s\";q=2;w=1, \"r-1h\";q=40;w=3600",
                        "\"r-1s\";q=3;w=1, \"r-1h\";q=50;w=3600"));
    }

    private static RuleSet exemptOnly() throws Exception {
        return ConfigLoader.parse(String.join("\n",
                "version: 1",
                "exempt:",
                "  header: X-Internal-Token",
                "  tokens: [\"" + TOKEN + "\"]",
                "rules: []",
                ""), "rules.yaml", Path.of("."), name -> null);
    }

    /** A request for /api/x from {@code address} in which a method rejects under {@code rule}: answered 429. */
    private FakeServlet rejectedUnderApi(String namespace, String address, String rule) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/api/x";
        servlet.remoteAddr = address;
        Object facts = gate.enter(servlet.request, servlet.response);
        assertTrue(gate.exit(servlet.request, servlet.response, facts,
                new RateLimitExceededException(rule, Duration.ofMillis(1500))));
        return servlet;
    }

    /**
     * A rejection thrown as the application's loader's own copy of the exception (see
     * OwnRejections: a copy defined before an attach, or by a child-first loader) is the same 429:
     * it was passed on as an unknown exception, a 500.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRejectionOfTheApplicationsOwnCopyOfTheExceptionBecomesA429(String namespace) throws Exception {
        ClassLoader loader = dev.ratelimit.bootstrap.OwnRejectionsTest.childFirst(
                dev.ratelimit.bootstrap.OwnRejectionsTest.Woven.class, RateLimitExceededException.class);
        loader.loadClass(RateLimitExceededException.class.getName()); // its copy, defined as by its catch clauses
        Class<?> woven = loader.loadClass(dev.ratelimit.bootstrap.OwnRejectionsTest.Woven.class.getName());
        Throwable own = RateLimitBridge.thrownIn(woven, new RateLimitExceededException("api", Duration.ofMillis(1500)));
        assertFalse(own instanceof RateLimitExceededException, "the case under test");
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/other";
        Object facts = gate.enter(servlet.request, servlet.response);
        assertTrue(gate.exit(servlet.request, servlet.response, facts, new ServletException("wrapped", own)));
        assertEquals(429, servlet.status);
        assertEquals("2", servlet.responseHeaders.get("Retry-After"));
        assertTrue(servlet.body().contains("\"violated-policies\":[\"api\"]"), servlet.body());
    }

    /**
     * A rule with several limits names its policies {@code RULE-WINDOW}; a rule may itself be
     * named so ({@code -} and digits are name characters, and the loader takes both). The
     * RateLimit-Policy field then names two policies "multi-1m" with different quotas, and the
     * RateLimit item "multi-1m" matches both: the name that ties an item to its policy no longer
     * does (review of the 429, 2026-12-03).
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void everyPolicyInTheFieldHasItsOwnName(String namespace) throws Exception {
        RuleSet ruleSet;
        try {
            ruleSet = ConfigLoader.parse(String.join("\n",
                    "version: 1",
                    "rules:",
                    "  - name: multi",
                    "    match: {http: {path: /api/**}}",
                    "    limits:",
                    "      - {limit: 1, window: 1m}",
                    "      - {limit: 100, window: 1h}",
                    "  - name: multi-1m",
                    "    match: {http: {path: /api/**}}",
                    "    limit: 5",
                    "    window: 1m",
                    ""), "rules.yaml", Path.of("."), name -> null);
        } catch (dev.ratelimit.config.ConfigException refused) {
            // the loader refuses the clash, at the rule that takes the policy's name
            assertTrue(refused.getMessage().contains("rules.yaml:8:11: rule name 'multi-1m' is also the name of the policy"
                    + " of rule 'multi' (line 3) for its 1m limit"), refused.getMessage());
            return;
        }
        ActiveRule multi = new ActiveRule(ruleSet.rule("multi").orElseThrow(), 1000);
        ActiveRule single = new ActiveRule(ruleSet.rule("multi-1m").orElseThrow(), 1000);
        HttpRules httpRules = new HttpRules(ruleSet, List.of(multi, single),
                name -> name.equals("multi") ? multi : name.equals("multi-1m") ? single : null);
        HttpRequests requests = new HttpRequests(() -> httpRules);
        FakeServlet servlet = new FakeServlet(namespace);
        Object facts = requests.enter(servlet.request, servlet.response);
        requests.exit(servlet.request, servlet.response, facts, null);
        String policy = servlet.responseHeaders.get("RateLimit-Policy");
        List<String> names = new java.util.ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"([^\"]*)\";").matcher(policy);
        while (m.find()) {
            names.add(m.group(1));
        }
        assertEquals(3, names.size(), policy);
        assertEquals(names.size(), new java.util.HashSet<>(names).size(), "a policy name twice: " + policy);
    }

    /**
     * A rule whose store failed, with {@code on-error: allow}, lets the request through without
     * knowing how much of its quota is left: its fields are left out. They said {@code r=0},
     * which tells a client that follows the draft to stop until {@code t}.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRuleWhoseStoreFailedOpenAddsNoFieldsToTheResponse(String namespace) throws Exception {
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "rules:",
                "  - name: api",
                "    match: {http: {path: /api/**}}",
                "    limit: 2",
                "    window: 1h",
                "  - name: shared",
                "    match: {http: {path: /api/**}}",
                "    limit: 5",
                "    window: 1h",
                ""), "rules.yaml", Path.of("."), name -> null);
        Limiter down = new Limiter() {
            @Override
            public long acquire(String key) {
                throw new StoreUnavailableException("Redis at redis://localhost:6379 is not answering", null);
            }

            @Override
            public long trackedKeys() {
                return -1;
            }
        };
        ActiveRule api = new ActiveRule(ruleSet.rule("api").orElseThrow(), 1000);
        ActiveRule shared = new ActiveRule(ruleSet.rule("shared").orElseThrow(), down);
        HttpRules httpRules = new HttpRules(ruleSet, List.of(api, shared),
                name -> name.equals("api") ? api : name.equals("shared") ? shared : null);
        HttpRequests failing = new HttpRequests(() -> httpRules);
        FakeServlet servlet = new FakeServlet(namespace);
        Object facts = failing.enter(servlet.request, servlet.response);
        assertNotSame(RateLimitBridge.REJECTED, facts);
        failing.exit(servlet.request, servlet.response, facts, null);
        assertEquals(1, shared.metrics().storeErrors());
        assertEquals("\"api\";q=2;w=3600", servlet.responseHeaders.get("RateLimit-Policy"));
        assertTrue(servlet.responseHeaders.get("RateLimit").startsWith("\"api\";r=1;t="),
                servlet.responseHeaders.get("RateLimit"));
        assertFalse(servlet.responseHeaders.get("RateLimit").contains("shared"), servlet.responseHeaders.get("RateLimit"));
    }

    /**
     * A shadow rule over its limit lets the request through, counts it as rejected, and puts
     * nothing in the response: its fields would tell a client r=0 for a limit not enforced (review
     * of the tests: no test had an HTTP rule in shadow mode).
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aShadowRuleNeverRejectsAndAddsNoFields(String namespace) throws Exception {
        RuleSet ruleSet = ConfigLoader.parse(String.join("\n",
                "version: 1",
                "rules:",
                "  - name: watched",
                "    match: {http: {path: /api/**}}",
                "    limit: 1",
                "    window: 1h",
                "    mode: shadow",
                ""), "rules.yaml", Path.of("."), name -> null);
        ActiveRule watched = new ActiveRule(ruleSet.rule("watched").orElseThrow(), 1000);
        HttpRules httpRules = new HttpRules(ruleSet, List.of(watched), name -> name.equals("watched") ? watched : null);
        HttpRequests shadowGate = new HttpRequests(() -> httpRules);
        for (int i = 0; i < 3; i++) {
            FakeServlet servlet = new FakeServlet(namespace);
            Object facts = shadowGate.enter(servlet.request, servlet.response);
            assertNotSame(RateLimitBridge.REJECTED, facts);
            shadowGate.exit(servlet.request, servlet.response, facts, null);
            assertEquals(200, servlet.status);
            assertNull(servlet.responseHeaders.get("RateLimit"), "request " + i);
            assertNull(servlet.responseHeaders.get("RateLimit-Policy"), "request " + i);
        }
        assertEquals(1, watched.metrics().allowed());
        assertEquals(2, watched.metrics().rejected());
    }

    /**
     * {@code RateLimitExceededException} is public: an application may throw its own, naming any
     * rule and any duration. The body stays valid JSON, and a retry far off is not turned into
     * a retry after 1 s by an overflow.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void aRejectionTheApplicationMadeItselfGetsAValidBodyAndRetry(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.uri = "/other";
        Object facts = gate.enter(servlet.request, servlet.response);
        Throwable thrown = new ServletException(
                new RateLimitExceededException("partner \"acme\" \\ 1\n", Duration.ofMillis(Long.MAX_VALUE)));
        assertTrue(gate.exit(servlet.request, servlet.response, facts, thrown));
        assertEquals(429, servlet.status);
        assertEquals(String.valueOf(Long.MAX_VALUE / 1000 + 1), servlet.responseHeaders.get("Retry-After"));
        assertTrue(servlet.body().contains("\"violated-policies\":[\"partner \\\"acme\\\" \\\\ 1\\u000a\"]}"),
                servlet.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void theRequestFactsAreWhatMethodRulesKeyOn(String namespace) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace).header("X-Tenant", "acme");
        servlet.uri = "/other";
        servlet.principal = "ann";
        RequestKeys facts = (RequestKeys) gate.enter(servlet.request, servlet.response);
        assertEquals("192.0.2.10", facts.clientIp());
        assertEquals("acme", facts.header("X-Tenant"));
        assertEquals("ann", facts.principal());
        assertFalse(facts.exempt());
    }

    /** A wrapper of the request that keeps attributes of its own, and may ask for another URI. */
    static final class OwnAttributes extends javax.servlet.http.HttpServletRequestWrapper {
        private final Map<String, Object> attributes = new java.util.HashMap<>();
        private final String uri;

        OwnAttributes(Object request, String uri) {
            super((javax.servlet.http.HttpServletRequest) request);
            this.uri = uri;
        }

        @Override
        public Object getAttribute(String name) {
            return attributes.get(name);
        }

        @Override
        public void setAttribute(String name, Object value) {
            attributes.put(name, value);
        }

        @Override
        public String getRequestURI() {
            return uri == null ? super.getRequestURI() : uri;
        }

        @Override
        public String getServletPath() {
            return uri == null ? super.getServletPath() : uri;
        }

        @Override
        public String getPathInfo() {
            return uri == null ? super.getPathInfo() : null;
        }
    }

    /**
     * A wrapper of the request being served that hides the agent's mark (attributes of its own)
     * is the same request when it asks for the same URI and method: not counted again (a client
     * had half its limit). One with a URI of its own is a sub-request (a batch endpoint's), counted
     * under its own path (servlet review and its review, thirty-third round).
     */
    @org.junit.jupiter.api.Test
    void aWrapperHidingTheMarkIsTheSameRequestUnlessItAsksForAnotherUri() throws Exception {
        FakeServlet outer = new FakeServlet("javax.servlet");
        outer.uri = "/other";
        Object outerFacts = gate.enter(outer.request, outer.response);
        assertNotNull(outerFacts);
        assertNull(gate.enter(new OwnAttributes(outer.request, null), outer.response), "the same request");
        OwnAttributes sub = new OwnAttributes(outer.request, "/api/strict/x");
        Object subFacts = gate.enter(sub, outer.response);
        assertNotNull(subFacts, "a sub-request of its own");
        assertEquals(1, rules.get("counted-always").metrics().allowed(), "counted under its own path");
        gate.exit(sub, outer.response, subFacts, null);
        gate.exit(outer.request, outer.response, outerFacts, null);
    }

    /**
     * The error page (an ERROR dispatch) or the page forwarded to (a FORWARD) of a request no entry
     * point saw (the container answered it itself) is its first entry point: counted under the URI
     * the client asked for, its context path stripped and its dot segments resolved, and rejected
     * with a 429 over the limit (servlet review, thirty-third round). A URI attribute that is not
     * text counts nothing.
     */
    @org.junit.jupiter.api.Test
    void theFirstDispatchOfARequestTheContainerAnsweredIsCountedByTheUriAskedFor() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        List<Boolean> rejected = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            FakeServlet error = new FakeServlet("javax.servlet");
            error.dispatcherType = "ERROR";
            error.uri = "/error-page";
            error.attributes.put("javax.servlet.error.request_uri", "/api/strict/secret");
            Object entered = gate.enter(error.request, error.response);
            rejected.add(entered == RateLimitBridge.REJECTED);
            statuses.add(error.status);
            if (entered != null && entered != RateLimitBridge.REJECTED) {
                gate.exit(error.request, error.response, entered, null);
            }
        }
        assertEquals(List.of(false, true), rejected);
        assertEquals(429, statuses.get(1));
        assertEquals(1, rules.get("counted-always").metrics().allowed());

        FakeServlet forward = new FakeServlet("javax.servlet");
        forward.dispatcherType = "FORWARD";
        forward.contextPath = "/ctx";
        forward.uri = "/ctx/login-error";
        forward.remoteAddr = "192.0.2.11";
        forward.attributes.put("javax.servlet.forward.request_uri", "/ctx/api/x/../users/y");
        Object entered = gate.enter(forward.request, forward.response);
        assertNotNull(entered);
        assertEquals(3, rules.get("api").metrics().allowed(), "counted by the rule of /api/users/y (and the two above)");
        gate.exit(forward.request, forward.response, entered, null);

        FakeServlet odd = new FakeServlet("javax.servlet");
        odd.dispatcherType = "ERROR";
        odd.attributes.put("javax.servlet.error.request_uri", new StringBuilder("/api/x"));
        odd.remoteAddr = "192.0.2.12";
        assertNull(gate.enter(odd.request, odd.response));
        assertEquals(3, rules.get("api").metrics().allowed());
    }

    /**
     * Servlet 6.1 dispatches the error page of a request the container answered itself as a GET
     * and keeps the client's method in {@code jakarta.servlet.error.method} (Tomcat 11, Jetty 12's
     * ee11): the error dispatch's own method made a refused POST login count under a rule of GETs,
     * and never under a rule of POSTs (HTTP review, thirty-seventh round). The client's method
     * decides; where the attribute is not set (Servlet 6.0 and earlier, javax), the request's own.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jakarta.servlet", "javax.servlet"})
    void theFirstDispatchOfARequestTheContainerAnsweredIsMatchedByTheMethodTheClientSent(String namespace) throws Exception {
        useRules("version: 1",
                "rules:",
                "  - name: login-post",
                "    match: {http: {path: /auth/**, methods: [POST]}}",
                "    key: client-ip",
                "    limit: 2",
                "    window: 1h",
                "  - name: login-get",
                "    match: {http: {path: /auth/**, methods: [GET]}}",
                "    key: client-ip",
                "    limit: 2",
                "    window: 1h",
                "");
        List<Boolean> rejected = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            FakeServlet error = new FakeServlet(namespace);
            error.dispatcherType = "ERROR";
            error.uri = "/error-page";
            error.attributes.put(namespace + ".error.request_uri", "/auth/login");
            if (namespace.equals("jakarta.servlet")) {
                error.method = "GET"; // Servlet 6.1: the dispatch's own method
                error.attributes.put("jakarta.servlet.error.method", "POST");
            } else {
                error.method = "POST"; // Servlet 4: the dispatch keeps the client's method
            }
            Object entered = gate.enter(error.request, error.response);
            rejected.add(entered == RateLimitBridge.REJECTED);
            if (entered != null && entered != RateLimitBridge.REJECTED) {
                gate.exit(error.request, error.response, entered, null);
            }
        }
        assertEquals(List.of(false, false, true), rejected, "the third POST is over login-post's limit of 2");
        assertEquals(2, rules.get("login-post").metrics().allowed());
        assertEquals(1, rules.get("login-post").metrics().rejected());
        assertEquals(0, rules.get("login-get").metrics().allowed() + rules.get("login-get").metrics().rejected(),
                "no GET was sent");

        FakeServlet get = new FakeServlet(namespace);
        get.dispatcherType = "ERROR";
        get.uri = "/error-page";
        get.remoteAddr = "192.0.2.13";
        get.attributes.put(namespace + ".error.request_uri", "/auth/login");
        Object entered = gate.enter(get.request, get.response);
        assertNotNull(entered);
        assertNotEquals(RateLimitBridge.REJECTED, entered);
        assertEquals(1, rules.get("login-get").metrics().allowed(), "a GET the container refused: its error.method, if set, is GET");
        gate.exit(get.request, get.response, entered, null);
    }
}
