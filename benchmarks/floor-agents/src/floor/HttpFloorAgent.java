package floor;

import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.util.jar.JarFile;
import net.bytebuddy.asm.Advice;

/**
 * The HTTP floor: the least per-request work an agent does that meets the specification for the
 * HTTP benchmark's rule ({@code api-per-ip}: {@code /api/**}, key {@code client-ip}, an exempt
 * header, the RateLimit fields on every allowed response), with nothing else. Built and woven as
 * {@link AdviceFloorAgent} is (one advice on {@code jakarta.servlet.http.HttpServlet.service}),
 * so its start-up cost is the advice floor's.
 *
 * <p>Per request the advice, inlined into {@code HttpServlet}, calls the servlet API directly:
 * the dispatcher type, the request URI (the rule's match: a prefix test, no normalisation), the
 * exempt header and {@code X-Forwarded-For} (the demo trusts the local proxy), the remote
 * address; {@link HttpFloorCounters} counts the client in one map of atomic counters and formats
 * the {@code RateLimit} item; the advice sets the two response fields. Left out, each of which
 * the agent must do and which can only add to this floor: the path's normalisation, rule tables,
 * windows, the bound on tracked keys, metrics, the request attribute that marks a request as
 * counted (for later dispatches), the thread's request context (for method rules), and the
 * isolation of the agent's classes. It ignores its options; its policy is fixed to the benchmark's
 * rule file ({@code limit} raised to 10^15 per minute).
 *
 * <p>{@code HttpFloorCounters} must be visible from {@code HttpServlet}'s class loader: it is
 * in {@code http-floor-boot.jar}, beside this agent's jar, appended to the bootstrap class path.
 */
public final class HttpFloorAgent {
    private HttpFloorAgent() {
    }

    public static void premain(String options, Instrumentation instrumentation) throws IOException {
        File jar = new File(HttpFloorAgent.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        instrumentation.appendToBootstrapClassLoaderSearch(new JarFile(new File(jar.getParentFile(), "http-floor-boot.jar")));
        AdviceFloorAgent.weave(instrumentation, RequestAdvice.class.getName());
    }

    /**
     * Inlined into {@code HttpServlet.service(ServletRequest, ServletResponse)}. The arguments are
     * taken as {@code Object} (the agent's own class loader sees no servlet API) and cast in the
     * host, where the servlet types resolve.
     */
    public static final class RequestAdvice {
        private RequestAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) Object request, @Advice.Argument(1) Object response) {
            if (!(request instanceof jakarta.servlet.http.HttpServletRequest)
                    || !(response instanceof jakarta.servlet.http.HttpServletResponse)) {
                return;
            }
            jakarta.servlet.http.HttpServletRequest http = (jakarta.servlet.http.HttpServletRequest) request;
            if (http.getDispatcherType() != jakarta.servlet.DispatcherType.REQUEST
                    || !http.getRequestURI().startsWith("/api/")) {
                return;
            }
            String state = HttpFloorCounters.allowed(http.getRemoteAddr(), http.getHeader("X-Forwarded-For"),
                    http.getHeader("X-Internal-Token"));
            if (state != null) {
                jakarta.servlet.http.HttpServletResponse answer = (jakarta.servlet.http.HttpServletResponse) response;
                answer.setHeader("RateLimit-Policy", HttpFloorCounters.POLICY);
                answer.setHeader("RateLimit", state);
            }
        }
    }
}
