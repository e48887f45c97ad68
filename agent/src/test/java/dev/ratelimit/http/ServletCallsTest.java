package dev.ratelimit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Both ways of calling a servlet API, the generated class and the method handles it falls back
 * to, against the real javax and jakarta interfaces: each call reaches the object's method with
 * the arguments given, and returns its answer.
 */
class ServletCallsTest {
    static Stream<Arguments> callsOfEachApi() {
        return Stream.of("jakarta.servlet", "javax.servlet").flatMap(namespace -> Stream.of(
                Arguments.of(namespace, "generated"), Arguments.of(namespace, "handles")));
    }

    private static ServletCalls calls(FakeServlet servlet, String kind) throws Exception {
        Class<?> request = Class.forName(servlet.namespace + ".http.HttpServletRequest", false,
                ServletCallsTest.class.getClassLoader());
        ServletCalls.Api api = new ServletCalls.Api(request);
        return kind.equals("generated") ? ServletCalls.generate(api) : new ServletCalls.Handles(api);
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("callsOfEachApi")
    void eachCallReachesTheRequestAndAnswersWhatItAnswers(String namespace, String kind) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace).header("X-Token", "a", "b");
        servlet.method = "PATCH";
        servlet.uri = "/shop/api/x";
        servlet.contextPath = "/shop";
        servlet.remoteAddr = "192.0.2.77";
        servlet.principal = "ann";
        servlet.dispatcherType = "ASYNC";
        ServletCalls calls = calls(servlet, kind);
        Object request = servlet.request;

        assertEquals("PATCH", calls.method(request));
        assertEquals("/shop/api/x", calls.requestUri(request));
        assertEquals("/shop", calls.contextPath(request));
        assertEquals("192.0.2.77", calls.remoteAddr(request));
        assertEquals("a", calls.header(request, "x-token"));
        assertNull(calls.header(request, "X-Other"));
        assertEquals(List.of("a", "b"), Collections.list(calls.headers(request, "X-Token")));
        assertEquals("ann", calls.userPrincipal(request).getName());
        assertEquals("ASYNC", ((Enum<?>) calls.dispatcherType(request)).name());
        assertFalse(calls.isAsyncStarted(request));
        servlet.asyncStarted = true;
        assertTrue(calls.isAsyncStarted(request));
        Object async = calls.asyncContext(request);
        assertSame(servlet.asyncContext, async);
        calls.completeAsync(async);
        assertTrue(servlet.asyncCompleted);
        assertNull(calls.attribute(request, "k"));
        Object value = new Object();
        calls.setAttribute(request, "k", value);
        assertSame(value, servlet.attributes.get("k"));
        assertSame(value, calls.attribute(request, "k"));
        assertEquals(15, servlet.requestCalls);
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("callsOfEachApi")
    void eachCallReachesTheResponse(String namespace, String kind) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        ServletCalls calls = calls(servlet, kind);
        Object response = servlet.response;

        assertFalse(calls.isCommitted(response));
        servlet.committed = true;
        assertTrue(calls.isCommitted(response));
        calls.setHeader(response, "X-Kept", "no");
        calls.reset(response);
        assertTrue(servlet.responseHeaders.isEmpty());
        calls.setStatus(response, 429);
        assertEquals(429, servlet.status);
        calls.setHeader(response, "RateLimit", "\"r\";r=0;t=9");
        calls.setContentType(response, "application/problem+json");
        assertEquals("\"r\";r=0;t=9", servlet.responseHeaders.get("RateLimit"));
        assertEquals("application/problem+json", servlet.responseHeaders.get("Content-Type"));
        calls.outputStream(response).write("{}".getBytes(StandardCharsets.UTF_8));
        assertEquals("{}", servlet.body());
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("callsOfEachApi")
    void anExceptionOfTheContainerReachesTheCallerAsThrown(String namespace, String kind) throws Exception {
        FakeServlet servlet = new FakeServlet(namespace);
        servlet.clientGone = true;
        ServletCalls calls = calls(servlet, kind);
        IOException gone = assertThrows(IOException.class, () -> calls.outputStream(servlet.response));
        assertEquals("Connection reset by peer", gone.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("namespaces")
    void eachApiGetsDirectCallsOfItsOwn(String namespace) throws Exception {
        Class<?> request = Class.forName(namespace + ".http.HttpServletRequest", false,
                ServletCallsTest.class.getClassLoader());
        ServletCalls calls = ServletCalls.of(new ServletCalls.Api(request));
        assertFalse(calls instanceof ServletCalls.Handles, calls.getClass().getName());
        assertTrue(calls.getClass().getName().contains("$Direct$"), calls.getClass().getName());
        assertNotSame(ServletCalls.class.getClassLoader(), calls.getClass().getClassLoader());
    }

    /**
     * As in a container: the servlet API in a loader of its own, which the agent's loader cannot
     * see (here the test's loader can see another copy of it, which the calls must not take).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("namespaces")
    void theCallsUseTheApiOfTheRequestsOwnLoader(String namespace) throws Exception {
        String requestName = namespace + ".http.HttpServletRequest";
        URL jar = Class.forName(requestName, false, ServletCallsTest.class.getClassLoader())
                .getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader webapp = new URLClassLoader(new URL[] {jar}, ClassLoader.getPlatformClassLoader())) {
            Class<?> request = Class.forName(requestName, false, webapp);
            Object proxy = Proxy.newProxyInstance(webapp, new Class<?>[] {request},
                    (self, method, args) -> method.getName().equals("getRequestURI") ? "/isolated" : null);
            ServletCalls calls = ServletCalls.generate(new ServletCalls.Api(request));
            assertEquals("/isolated", calls.requestUri(proxy));
            assertNull(calls.header(proxy, "X-Any"));
        }
    }

    static Stream<String> namespaces() {
        return Stream.of("jakarta.servlet", "javax.servlet");
    }
}
