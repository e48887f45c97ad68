package dev.ratelimit.http;

import dev.ratelimit.RateLimitExceededException;
import dev.ratelimit.bootstrap.HttpGate;
import dev.ratelimit.bootstrap.OwnRejections;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.bootstrap.RequestContext;
import dev.ratelimit.config.Mode;
import dev.ratelimit.limit.ActiveRule;
import dev.ratelimit.limit.Outcome;
import dev.ratelimit.limit.ThreadCalls;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Supplier;

/**
 * Decides servlet requests: the {@link HttpGate} the bridge calls from servlet advice.
 *
 * <h2>Design</h2>
 *
 * <p>Every servlet entry point (each {@code FilterChain.doFilter}, each {@code Servlet.service})
 * is instrumented, and the first one a request reaches acts; the rest see the request attribute
 * {@value #SEEN} or a dispatcher type other than {@code REQUEST} (forward, include, error, async)
 * and do nothing. So a request is counted once, before any filter or servlet of the application
 * runs.
 *
 * <p>Identity, not address: a request whose exempt header holds a valid token is not counted by
 * rules that honour exemptions; a present but wrong token is counted like any request, and
 * counted again as a forged token. The request's facts stay in the bridge's thread-local until
 * the entry point returns, so method rules see them.
 *
 * <p>A rejection replaces the response with a 429 (unless it is already committed: then the
 * request passes, and that is counted). A {@link RateLimitExceededException} thrown by a method
 * rule and escaping the entry point, also wrapped, becomes the same 429 instead of a 500.
 */
public final class HttpRequests implements HttpGate {
    static final String SEEN = "dev.ratelimit.seen";
    private static final int MAX_CAUSES = 16;

    private final Supplier<HttpRules> rules;

    public HttpRequests(Supplier<HttpRules> rules) {
        this.rules = rules;
    }

    @Override
    public Object enter(Object request, Object response) {
        Object serving = RequestContext.current();
        try {
            return enter(serving, request, response);
        } catch (Throwable t) {
            // the bridge lets the call through and no exit advice runs for it: leave the thread
            // serving what it served, not a request half entered
            RequestContext.set(serving);
            throw t;
        }
    }

    private Object enter(Object serving, Object request, Object response) {
        if (serving instanceof RequestFacts && ((RequestFacts) serving).isFor(request)) {
            // an entry point inside one this request has passed (the next filter, the servlet):
            // the same request object, on the same thread, its facts still in the context
            return null;
        }
        ServletApi api = ServletApi.of(request);
        if (api == null) {
            return null;
        }
        Object seen = api.attribute(request, SEEN);
        if (seen != null || !api.isInitialDispatch(request)) {
            if (seen == serving && serving instanceof RequestFacts) {
                // inside an entry point of this request, given a wrapper of it (a filter's):
                // method rules read the user from the innermost one
                ((RequestFacts) serving).enteredWith(request);
                return null;
            }
            if (seen instanceof RequestFacts && serving == null) {
                // A later dispatch of a request counted already (async, error), on a thread
                // serving nothing else: not counted again, but method rules called in it see the
                // request (its client, its token), and their rejections become a 429 at its exit
                ((RequestFacts) seen).enteredWith(request);
                begin(seen);
                return seen;
            }
            String clientUri = seen == null && serving == null ? api.clientUriOfDispatch(request) : null;
            if (clientUri == null) {
                return null;
            }
            // The error page (or the page forwarded to) of a request the container answered before
            // any filter or servlet: a failed container login (BASIC's 401 page, FORM's login-error
            // page), /WEB-INF/..., a path nothing serves. Its first entry point: counted here,
            // under the path the client asked for, as Jetty and Undertow send such requests
            // through the application. It was not counted at all on Tomcat, and method rules in
            // the page read no client and no token (servlet review, thirty-third round)
            return first(serving, api, request, response, clientUri);
        }
        if (serving instanceof RequestFacts && ((RequestFacts) serving).isWrappedBy(request)) {
            // a filter's wrapper of the request being served that keeps attributes of its own, so
            // that the mark of a seen request does not show through it: the same request, not a
            // sub-request. It was counted again, and a client had half its limit (servlet review,
            // thirty-third round)
            ((RequestFacts) serving).enteredWith(request);
            return null;
        }
        return first(serving, api, request, response, null);
    }

    /**
     * A request's first entry point: its facts made and marked, its rules decided. {@code clientUri}
     * is the URI an error dispatch or a forward was for (null: the request's own, and the path it
     * is mapped to).
     */
    private Object first(Object serving, ServletApi api, Object request, Object response, String clientUri) {
        HttpRules current = rules.get();
        TokenVerifier.Verdict verdict = current.verdict(api, request);
        RequestFacts facts = new RequestFacts(api, request, current.clients(), verdict, current.exemptHeader());
        // the facts mark the request as seen, for the dispatches to come
        api.setAttribute(request, SEEN, facts);
        if (!current.isEmpty() && decide(current, api, request, response, facts, verdict, clientUri)) {
            return RateLimitBridge.REJECTED;
        }
        if (serving == null) {
            begin(facts);
            return facts;
        }
        // another request served inside the one being served (a batch endpoint's sub-requests):
        // when it ends, the thread serves the outer one again, its facts and its depth of calls
        Nested nested = new Nested(facts, serving, RequestContext.slot().callsAtRequest);
        begin(facts);
        return nested;
    }

    /** What {@link #enter} returns for a request entered while the thread served another. */
    private static final class Nested {
        final Object facts;
        final Object outer;
        final int outerCallsAtRequest;

        Nested(Object facts, Object outer, int outerCallsAtRequest) {
            this.facts = facts;
            this.outer = outer;
            this.outerCallsAtRequest = outerCallsAtRequest;
        }
    }

    /** The thread begins to serve a request: its facts go in the context, and how deep in limited calls it is. */
    private static void begin(Object facts) {
        RequestContext.Slot slot = RequestContext.slot();
        slot.request = facts;
        slot.callsAtRequest = slot.calls instanceof ThreadCalls ? ((ThreadCalls) slot.calls).depth() : 0;
    }

    /**
     * The thread is done serving the request: no limited call it made is still in progress, so
     * the calls are cut back to the depth the request began at (see {@link ThreadCalls}).
     */
    private static void end() {
        RequestContext.Slot slot = RequestContext.slot();
        slot.request = null;
        if (slot.calls instanceof ThreadCalls) {
            ThreadCalls calls = (ThreadCalls) slot.calls;
            if (calls.depth() > slot.callsAtRequest) {
                calls.truncate(slot.callsAtRequest);
            }
        }
    }

    /** Applies the matching rules; returns true when the request was rejected and answered. */
    private static boolean decide(HttpRules current, ServletApi api, Object request, Object response,
            RequestFacts facts, TokenVerifier.Verdict verdict, String clientUri) {
        String uri = clientUri == null ? api.requestUri(request) : clientUri;
        String contextPath = api.contextPath(request);
        String path = RequestPath.normalize(uri, contextPath);
        // and the path the container mapped, when it differs: a container that does not resolve
        // dot segments or decode %2F (Undertow) serves /api/users/u1/../.. with the servlet at
        // /api/users/*, a path the resolved URI (/) is not under
        String routed;
        try {
            // the servlet path of an error dispatch or a forward is its target's
            routed = clientUri != null ? null : RequestPath.routed(api.servletPath(request), api.pathInfo(request), path);
        } catch (RuntimeException | LinkageError unmapped) {
            // a container or a request wrapper that will not say (the review recalled Jetty 10
            // and 11 throwing for an ambiguous URI; not checked here): the URI's path still
            // decides, rather than no rule at all
            RateLimitBridge.agentError("reading the path the container mapped", unmapped,
                    "the request is matched by its URI alone");
            routed = null;
        }
        // and the URI with its dot segments kept, as Spring MVC routes it (/api/reports/.. reached
        // the handler of /api/reports/{user})
        // (a URI normalize gave back as it is holds no dot segment: no second scan)
        String literal = path == uri ? null : RequestPath.literal(uri, contextPath, path);
        // the client's method too: an error dispatch is a GET under Servlet 6.1, and a refused
        // POST login was counted by a rule of GETs, and never by one of POSTs (HTTP review,
        // thirty-seventh round)
        String method = clientUri == null ? api.method(request) : api.clientMethodOfDispatch(request);
        int[] matched = current.matching(method, path, routed, literal);
        if (matched.length == 0) {
            return false;
        }
        List<String> violated = null;
        long retryMillis = 0;
        // one rule matches most requests: its fields are used as they are, joined only for more
        String policies = null;
        String states = null;
        List<String> rejectedStates = null;
        // a refused request whose response is committed already passes anyway (it cannot be
        // answered 429): the rules after the refusing one count it then, as a request they see
        boolean passing = false;
        for (int index : matched) {
            ActiveRule rule = current.rule(index);
            if (verdict == TokenVerifier.Verdict.FORGED) {
                rule.metrics().countForgedToken();
            }
            if (violated != null && !passing) {
                // refused: the rules after the one that refused the request do not count it, as
                // for a method's rules. Counted by every rule, a client over its own limit used up
                // a cap that every client shares with requests that never reached the application
                // (the review of the HTTP path, thirty-fifth round); put the narrowest rule first.
                // Unless its response is committed: then it passes, and they count it
                continue;
            }
            boolean exempted = rule.config().exempt() && facts.exempt();
            long outcome;
            try {
                outcome = rule.decide(null, facts);
            } catch (Throwable e) {
                // a key that cannot be read (an application's Principal that throws) lets the
                // request through this rule alone; the other rules still decide, as for methods
                RateLimitBridge.agentError("limiting a request under rule '" + rule.name() + "'", e);
                continue;
            }
            if (exempted || rule.config().mode() == Mode.SHADOW || outcome == Outcome.ALLOWED_UNCOUNTED) {
                continue;
            }
            RateLimitFields fields = current.fields(index);
            policies = append(policies, fields.policy());
            if (Outcome.isAllowed(outcome)) {
                states = append(states, fields.allowed(Outcome.remaining(outcome)));
            } else {
                if (violated == null) {
                    violated = new ArrayList<>(1);
                    rejectedStates = new ArrayList<>(1);
                    passing = api.isCommitted(response);
                }
                violated.add(rule.name());
                rejectedStates.add(fields.rejected(Outcome.retryMillis(outcome)));
                retryMillis = Math.max(retryMillis, Outcome.retryMillis(outcome));
            }
        }
        if (violated != null) {
            if (passing) {
                // only the rules the request was over: the others let it through anyway
                for (int index : matched) {
                    ActiveRule rule = current.rule(index);
                    if (violated.contains(rule.name())) {
                        rule.metrics().countPassedCommitted();
                    }
                }
                return false;
            }
            try {
                reject(api, response, policies, String.join(", ", rejectedStates), violated, retryMillis);
            } catch (Throwable writeFailed) {
                // the decision stands: the call was counted as rejected, and the application must
                // not run because the 429 could not be written (the client went away, say)
                RateLimitBridge.agentError("writing a 429", writeFailed,
                        "the request stays rejected: the application does not run for it");
            }
            return true;
        }
        if (policies != null) {
            api.setHeader(response, "RateLimit-Policy", policies);
            api.setHeader(response, "RateLimit", states);
            facts.httpPolicies(policies);
        }
        return false;
    }

    /** A list field with {@code item} added: the item itself when the list is empty (null). */
    private static String append(String list, String item) {
        return list == null ? item : list + ", " + item;
    }

    private static void reject(ServletApi api, Object response, String policies, String states, List<String> violated,
            long retryMillis) {
        long retrySeconds = RateLimitFields.seconds(retryMillis);
        List<String[]> headers = new ArrayList<>(3);
        headers.add(new String[] {"Retry-After", Long.toString(retrySeconds)});
        if (!policies.isEmpty()) {
            headers.add(new String[] {"RateLimit-Policy", policies});
        }
        if (!states.isEmpty()) {
            headers.add(new String[] {"RateLimit", states});
        }
        api.replace(response, 429, headers, "application/problem+json",
                RateLimitFields.problem(violated, retrySeconds));
    }

    @Override
    public boolean exit(Object request, Object response, Object facts, Throwable thrown) {
        if (facts == RateLimitBridge.REJECTED) {
            return false;
        }
        end();
        Object own = facts;
        if (facts instanceof Nested) {
            Nested nested = (Nested) facts;
            RequestContext.Slot slot = RequestContext.slot();
            slot.request = nested.outer;
            slot.callsAtRequest = nested.outerCallsAtRequest;
            own = nested.facts;
        }
        RateLimitExceededException rejection = rejection(thrown);
        if (rejection == null) {
            return false;
        }
        ServletApi api = ServletApi.of(request);
        if (api == null || api.isCommitted(response)) {
            return false;
        }
        RateLimitFields fields = rules.get().fields(rejection.rule());
        long retryMillis = RateLimitFields.millis(rejection.retryAfter());
        // the HTTP rules that counted the request are listed too, as on their own 429
        String policies = withPolicy(own instanceof RequestFacts ? ((RequestFacts) own).httpPolicies() : null,
                fields == null ? "" : fields.policy());
        try {
            reject(api, response, policies,
                    fields == null ? "" : fields.rejected(retryMillis), Collections.singletonList(rejection.rule()),
                    retryMillis);
        } catch (RuntimeException | LinkageError writeFailed) {
            // the client went away, say: the exception goes on as it would without the agent,
            // and the request served around this one (if any) keeps its facts, restored above
            RateLimitBridge.agentError("writing a 429 for a rejected method call", writeFailed,
                    "the method's rejection goes on to the container as an exception");
            return false;
        }
        if (api.isAsyncStarted(request)) {
            // The application put the request into asynchronous mode before the rejected call:
            // nothing will complete it now, and Jetty and Tomcat alike held it until the async
            // timeout (30 s), with the exception passed on as with the 429 swallowed.
            try {
                api.completeAsync(request);
            } catch (RuntimeException | LinkageError notCompleted) {
                // completed meanwhile by another thread of the application's, say
                RateLimitBridge.agentError("completing an asynchronous request answered 429", notCompleted,
                        "the request stays rejected");
            }
        }
        return true;
    }

    /**
     * The HTTP rules' policy items with a method rule's added, unless they are among them (or
     * the rule is unknown). Items are the same policy by their names: a reload between the
     * request's start and the rejection may have made an HTTP rule that counted the request a
     * method rule of the same name with another limit, and the field then named one policy twice,
     * with two quotas. The rule's items as it refused are listed, in place of the request's items
     * of the same names (a reload that also changed the rule's windows may leave an old item of
     * another name beside them: no name is listed twice).
     */
    static String withPolicy(String httpPolicies, String policy) {
        if (httpPolicies == null) {
            return policy;
        }
        if (policy.isEmpty()) {
            return httpPolicies;
        }
        String[] own = policy.split(", ");
        StringBuilder listed = new StringBuilder(httpPolicies.length() + policy.length() + 2);
        boolean placed = false;
        for (String item : httpPolicies.split(", ")) {
            boolean same = false;
            for (String mine : own) {
                same |= itemName(item).equals(itemName(mine));
            }
            if (!same || !placed) {
                listed.append(listed.length() == 0 ? "" : ", ").append(same ? policy : item);
                placed |= same;
            }
        }
        return placed ? listed.toString() : httpPolicies + ", " + policy;
    }

    /** {@code "NAME"} of a policy item {@code "NAME";q=...}: a rule name holds no quote nor comma. */
    private static String itemName(String item) {
        int end = item.indexOf('"', 1);
        return end < 0 ? item : item.substring(0, end + 1);
    }

    /** The rejection in an exception's cause chain, also when wrapped (e.g. in a ServletException). */
    static RateLimitExceededException rejection(Throwable thrown) {
        Throwable cause = thrown;
        for (int depth = 0; cause != null && depth < MAX_CAUSES; depth++) {
            if (cause instanceof RateLimitExceededException) {
                return (RateLimitExceededException) cause;
            }
            RateLimitExceededException own = OwnRejections.read(cause);
            if (own != null) {
                // the application's loader's copy (see OwnRejections): the same 429
                return own;
            }
            cause = cause.getCause();
        }
        return null;
    }
}
