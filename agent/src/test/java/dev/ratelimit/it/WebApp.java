package dev.ratelimit.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real servlet container running the agent in a forked JVM, for HTTP tests:
 *
 * <pre>{@code
 * try (WebApp app = WebApp.start(WebApp.Container.TOMCAT, jdk, rules, Map.of("RATELIMIT_INTERNAL_TOKEN", t), List.of())) {
 *     WebApp.Response r = app.get("/api/domains/shop.example.com", "X-Internal-Token", t);
 *     assertEquals(200, r.status, app::output);
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@link Container#JETTY}: {@code dev.ratelimit.fixture.jetty.JettyApp}, jakarta.servlet on
 *       Jetty 12 ee10, context path {@code /}.
 *   <li>{@link Container#TOMCAT}: {@code dev.ratelimit.fixture.tomcat.TomcatApp}, javax.servlet on
 *       Tomcat 9, context path {@code /ctx}.
 *   <li>{@link Container#UNDERTOW}: {@code dev.ratelimit.fixture.undertow.UndertowApp}, the same
 *       jakarta.servlet application as Jetty's on Undertow 2.3, context path {@code /uctx}.
 *   <li>{@link Container#SPRING_BOOT}: {@code test-app/target/test-app.jar} (Spring Boot 4 on
 *       embedded Tomcat), context path {@code /}; it has no /stats, /api/forward, /api/include,
 *       /api/boom, /api/async, and its /api/messages is POST only.
 *   <li>{@link Container#SPRING_BOOT_JETTY}: {@code test-app-jetty/target/test-app-jetty.jar}, the
 *       same application on Spring Boot's embedded Jetty 12 (ee11), context path {@code /}.
 * </ul>
 *
 * Paths given to {@link #get}, {@link #post} and {@link #request} are relative to {@link #base()}
 * (the context path is prepended); the request text given to {@link #raw} is sent exactly as it is,
 * so its target must include the context path. Inherited {@code RATELIMIT_*} variables are not
 * passed to the child; only those given in {@code env} are.
 */
public final class WebApp implements AutoCloseable {
    /** The applications the harness can start. */
    public enum Container {
        JETTY("dev.ratelimit.fixture.jetty.JettyApp", null, ""),
        TOMCAT("dev.ratelimit.fixture.tomcat.TomcatApp", null, "/ctx"),
        UNDERTOW("dev.ratelimit.fixture.undertow.UndertowApp", null, "/uctx"),
        SPRING_BOOT(null, "test-app", ""),
        SPRING_BOOT_JETTY(null, "test-app-jetty", "");

        private final String mainClass;
        private final String bootModule;
        private final String contextPath;

        Container(String mainClass, String bootModule, String contextPath) {
            this.mainClass = mainClass;
            this.bootModule = bootModule;
            this.contextPath = contextPath;
        }

        /** The context path the application is deployed at: "/ctx", "/uctx" or "" (root). */
        public String contextPath() {
            return contextPath;
        }

        /** Whether this is the demo's Spring Boot executable jar (on Tomcat or on Jetty). */
        public boolean isSpringBoot() {
            return bootModule != null;
        }
    }

    /** How long a child may take to print its port. */
    private static final String LOOPBACK = "127.0.0.1";

    public static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern PORT_LINE = Pattern.compile("(?m)^PORT=(\\d+)\\s*$");
    /** Spring Boot 4 prints e.g. {@code Tomcat started on port 33711 (http) with context path '/'}. */
    private static final Pattern BOOT_PORT_LINE =
            Pattern.compile("(?:Tomcat|Jetty|Undertow) started on port(?:\\(s\\):|s?) (\\d+)");
    private static final Pattern BOOT_STARTED_LINE = Pattern.compile("Started \\S+ in [0-9.]+ seconds");

    private final Container container;
    private final Process process;
    private final Path stdout;
    private final Path stderr;
    private final int port;
    private final List<String> command;
    private final HttpClient client;

    private WebApp(Container container, Process process, Path stdout, Path stderr, int port, List<String> command) {
        this.container = container;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
        this.port = port;
        this.command = command;
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /**
     * Starts {@code container} on {@code jdk} under {@code -javaagent:<agent jar>=config=<rulesFile>}
     * followed by {@code ,option} for each of {@code extraAgentOptions} (e.g. "log=debug"), with
     * {@code env} added to the child's environment, and waits until it listens.
     */
    public static WebApp start(Container container, Path jdk, Path rulesFile, Map<String, String> env,
            List<String> extraAgentOptions) {
        return start(container, jdk, rulesFile, env, extraAgentOptions, List.of());
    }

    /** As {@link #start(Container, Path, Path, Map, List)}, with JVM options (e.g. "-Dx=y") before the agent. */
    public static WebApp start(Container container, Path jdk, Path rulesFile, Map<String, String> env,
            List<String> extraAgentOptions, List<String> jvmOptions) {
        StringBuilder agent = new StringBuilder("-javaagent:").append(ForkedJvm.agentJar())
                .append("=config=").append(rulesFile.toAbsolutePath());
        for (String option : extraAgentOptions) {
            agent.append(',').append(option);
        }
        List<String> jvm = new ArrayList<>(jvmOptions);
        jvm.add(agent.toString());
        return launch(container, jdk, env, jvm);
    }

    /** The same application without the agent: the baseline a test can compare responses with. */
    public static WebApp startWithoutAgent(Container container, Path jdk, Map<String, String> env) {
        return launch(container, jdk, env, List.of());
    }

    private static WebApp launch(Container container, Path jdk, Map<String, String> env, List<String> jvmOptions) {
        List<String> command = new ArrayList<>();
        command.add(jdk.resolve("bin/java").toString());
        command.addAll(jvmOptions);
        if (container.isSpringBoot()) {
            command.add("-jar");
            command.add(bootJar(container).toString());
            command.add("--server.port=0");
            command.add("--server.address=127.0.0.1");
        } else {
            command.add("-cp");
            command.add(classPath(container));
            command.add(container.mainClass);
        }
        Path out = null;
        Path err = null;
        Process process = null;
        try {
            out = Files.createTempFile("webapp-" + container.name().toLowerCase(Locale.ROOT) + "-out", ".txt");
            err = Files.createTempFile("webapp-" + container.name().toLowerCase(Locale.ROOT) + "-err", ".txt");
            out.toFile().deleteOnExit();
            err.toFile().deleteOnExit();
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            Map<String, String> childEnv = builder.environment();
            childEnv.keySet().removeIf(name -> name.startsWith("RATELIMIT_"));
            env.forEach((name, value) -> {
                if (value == null) {
                    childEnv.remove(name);
                } else {
                    childEnv.put(name, value);
                }
            });
            process = builder.start();
            int port = awaitPort(container, process, out, err, command);
            return new WebApp(container, process, out, err, port, List.copyOf(command));
        } catch (IOException e) {
            stop(process);
            throw new UncheckedIOException("could not start " + container + ": " + command, e);
        } catch (InterruptedException e) {
            stop(process);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting " + container, e);
        } catch (RuntimeException | Error e) {
            stop(process);
            throw e;
        }
    }

    private static int awaitPort(Container container, Process process, Path out, Path err, List<String> command)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        int port = -1;
        while (System.nanoTime() < deadline) {
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (container.isSpringBoot()) {
                Matcher m = BOOT_PORT_LINE.matcher(text);
                // The port line comes just before the context reports itself started; wait for both.
                if (m.find() && BOOT_STARTED_LINE.matcher(text).find()) {
                    port = Integer.parseInt(m.group(1));
                }
            } else {
                Matcher m = PORT_LINE.matcher(text);
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                }
            }
            if (port > 0) {
                return port;
            }
            if (!process.isAlive()) {
                throw new AssertionError(container + " exited with " + process.exitValue() + " before listening: "
                        + command + "\n" + output(out, err));
            }
            Thread.sleep(50);
        }
        stop(process);
        throw new AssertionError(container + " printed no port within " + STARTUP_TIMEOUT + ": " + command + "\n"
                + output(out, err));
    }

    /**
     * The executable jar of a Spring Boot container: {@code test-app/target/test-app.jar} or
     * {@code test-app-jetty/target/test-app-jetty.jar}, built by the module of that name next to
     * this (agent) module, or the path in the system property {@code ratelimit.<module>.jar}.
     */
    static Path bootJar(Container container) {
        String module = container.bootModule;
        String configured = System.getProperty("ratelimit." + module + ".jar");
        Path jar = configured != null && !configured.isBlank() ? Path.of(configured)
                : ForkedJvm.agentJar().getParent().getParent()
                        .resolve("../" + module + "/target/" + module + ".jar").normalize();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " does not exist: build the Spring Boot demo first"
                    + " (mvn -B install -DskipTests from the project root, or mvn -pl " + module + " package)");
        }
        return jar.toAbsolutePath();
    }

    /**
     * The fork's class path: test classes and the API jar, plus this container's jars taken from
     * the test class path. Never agent/target/classes, and never the other container's servlet API.
     */
    static String classPath(Container container) {
        List<String> entries = new ArrayList<>();
        entries.add(ForkedJvm.applicationClassPath());
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String e = entry.replace('\\', '/');
            boolean wanted;
            switch (container) {
                case JETTY:
                    wanted = e.contains("/org/eclipse/jetty/") || e.contains("/jakarta/servlet/") || e.contains("/org/slf4j/");
                    break;
                case UNDERTOW:
                    wanted = e.contains("/io/undertow/") || e.contains("/org/jboss/") || e.contains("/org/wildfly/")
                            || e.contains("/io/smallrye/") || e.contains("/jakarta/servlet/")
                            || e.contains("/jakarta/annotation/");
                    break;
                default:
                    wanted = e.contains("/org/apache/tomcat/") || e.contains("/javax/servlet/");
                    break;
            }
            if (wanted) {
                entries.add(entry);
            }
        }
        if (entries.size() == 1) {
            throw new IllegalStateException("no " + container + " jars on the test class path: " + System.getProperty("java.class.path"));
        }
        return String.join(File.pathSeparator, entries);
    }

    public Container container() {
        return container;
    }

    public int port() {
        return port;
    }

    /** "/ctx" for TOMCAT, "/uctx" for UNDERTOW, "" otherwise. */
    public String contextPath() {
        return container.contextPath();
    }

    /** {@code http://127.0.0.1:<port><contextPath>}, no trailing slash. */
    public URI base() {
        return URI.create("http://127.0.0.1:" + port + contextPath());
    }

    /** The child's process id. */
    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The exit code once the child has ended (after {@link #close()}); throws while it runs. */
    public int exitValue() {
        return process.exitValue();
    }

    /** The command line that started the child. */
    public List<String> command() {
        return command;
    }

    /** What the child has printed to stdout so far. */
    public String stdout() {
        return read(stdout);
    }

    /** What the child has printed to stderr so far. */
    public String stderr() {
        return read(stderr);
    }

    /** The command, stdout and stderr, for assertion messages. Still readable after {@link #close()}. */
    public String output() {
        return container + " " + command + "\n" + output(stdout, stderr);
    }

    private static String output(Path out, Path err) {
        return "stdout:\n" + read(out) + "\nstderr:\n" + read(err);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(" + file + " unreadable: " + e + ")";
        }
    }

    /** Stops the child (SIGTERM, then SIGKILL after 5 s) and waits for it to end. */
    @Override
    public void close() {
        stop(process);
    }

    private static void stop(Process process) {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    // ---- HTTP --------------------------------------------------------------------------------

    /** GET {@code base() + pathAndQuery} with headers given as name, value, name, value, ... */
    public Response get(String pathAndQuery, String... headerNameValuePairs) {
        return request("GET", pathAndQuery, null, headerNameValuePairs);
    }

    /** POST {@code base() + pathAndQuery} with a text body (none when null). */
    public Response post(String pathAndQuery, String body, String... headerNameValuePairs) {
        return request("POST", pathAndQuery, body, headerNameValuePairs);
    }

    /**
     * Any method on {@code base() + pathAndQuery} through java.net.http (HTTP/1.1, no redirects).
     * java.net.http refuses some headers (Host, Connection, Content-Length, ...): use {@link #raw}.
     */
    public Response request(String method, String pathAndQuery, String body, String... headerNameValuePairs) {
        if (headerNameValuePairs.length % 2 != 0) {
            throw new IllegalArgumentException("headers must be name, value pairs");
        }
        if (!pathAndQuery.startsWith("/")) {
            throw new IllegalArgumentException("path must start with /: " + pathAndQuery);
        }
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(base() + pathAndQuery))
                .timeout(HTTP_TIMEOUT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        for (int i = 0; i < headerNameValuePairs.length; i += 2) {
            builder.header(headerNameValuePairs[i], headerNameValuePairs[i + 1]);
        }
        try {
            HttpResponse<String> response = client.send(builder.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Response(response.statusCode(), response.headers().map(), response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(method + " " + pathAndQuery + " failed; " + output(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + method + " " + pathAndQuery, e);
        }
    }

    /**
     * GET over a plain socket, for targets and headers java.net.http will not send: the request
     * line is {@code GET <target> HTTP/1.1} with the target exactly as given (context path
     * included, e.g. "/ctx/api;jsessionid=1/domains/x"), then {@code Host}, the given header lines
     * ("Name: value"; repeat a name to repeat a header) and {@code Connection: close}.
     */
    public Response rawGet(String target, String... headerLines) {
        return getFrom(LOOPBACK, target, headerLines);
    }

    /**
     * As {@link #rawGet}, from the loopback address {@code source}: on Linux all of 127.0.0.0/8 is
     * loopback, so each test can be a client of its own without a proxy.
     */
    public Response getFrom(String source, String target, String... headerLines) {
        return send(source, "GET", target, null, headerLines);
    }

    /** A POST over a plain socket from {@code source}; see {@link #getFrom}. */
    public Response postFrom(String source, String target, String body, String... headerLines) {
        return send(source, "POST", target, body, headerLines);
    }

    /** One request over a plain socket from {@code source}, the target exactly as given. */
    public Response send(String source, String method, String target, String body, String... headerLines) {
        StringBuilder text = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1:").append(port).append("\r\n");
        for (String line : headerLines) {
            text.append(line).append("\r\n");
        }
        byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        if (body != null) {
            text.append("Content-Type: text/plain\r\nContent-Length: ").append(payload.length).append("\r\n");
        }
        text.append("Connection: close\r\n\r\n");
        byte[] head = text.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] request = Arrays.copyOf(head, head.length + payload.length);
        System.arraycopy(payload, 0, request, head.length, payload.length);
        return raw(source, request);
    }

    /**
     * Sends {@code requestText} (each char one byte, ISO-8859-1) to the port over a plain socket
     * and reads one response. Include {@code Connection: close}; the response is framed by
     * Content-Length or chunked encoding when it has them, else read to the end of the stream.
     */
    public Response raw(String requestText) {
        return raw(LOOPBACK, requestText.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** As {@link #raw(String)} with exact bytes, sent from the loopback address {@code source}. */
    public Response raw(String source, byte[] request) {
        try (Socket socket = new Socket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
            socket.connect(new InetSocketAddress(LOOPBACK, port), 5_000);
            socket.setSoTimeout((int) HTTP_TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(request);
            out.flush();
            return RawHttp.read(new BufferedInputStream(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException("raw request failed: " + new String(request, StandardCharsets.ISO_8859_1)
                    + "\n" + output(), e);
        }
    }

    /**
     * Two requests on one kept-alive connection from {@code source}: {@code first}, written on a
     * thread of its own (a server may answer before it has read a large body, and then never read
     * the rest), then {@code second}, unless the first response says {@code Connection: close}.
     * The second answer is null when the server said it would close. A connection closed without
     * saying so fails with an {@link UncheckedIOException} naming the first response.
     */
    public Response[] twoOnOneConnection(String source, byte[] first, byte[] second) {
        try (Socket socket = new Socket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
            socket.connect(new InetSocketAddress(LOOPBACK, port), 5_000);
            socket.setSoTimeout((int) HTTP_TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            Thread writer = new Thread(() -> {
                try {
                    out.write(first);
                    out.flush();
                } catch (IOException closedBeforeTheEnd) {
                    // the server stopped reading, as it may: its answer says what comes next
                }
            }, "first-request-writer");
            writer.setDaemon(true);
            writer.start();
            BufferedInputStream in = new BufferedInputStream(socket.getInputStream());
            Response answer = RawHttp.read(in);
            String connection = answer.header("Connection");
            if (connection != null && connection.toLowerCase(Locale.ROOT).contains("close")) {
                return new Response[] {answer, null};
            }
            writer.join(HTTP_TIMEOUT.toMillis());
            try {
                out.write(second);
                out.flush();
                return new Response[] {answer, RawHttp.read(in)};
            } catch (IOException e) {
                throw new UncheckedIOException("the connection was closed after " + answer.status + " "
                        + answer.headers + " without Connection: close", e);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the first request failed\n" + output(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static final Pattern STATS = Pattern.compile(
            "\\{\"servletCalls\":(\\d+),\"filterCalls\":(\\d+),\"asyncCompleted\":(\\d+)}");

    /**
     * {@code GET /stats} of the JETTY, TOMCAT and UNDERTOW fixtures: how often the application's servlets and
     * its filter ran. Each dispatch counts a servlet call (a forward or an async request runs two
     * servlets); the filter runs once per request (REQUEST dispatches only); and how many
     * asynchronous requests of {@code /api/async?to=inline} completed. /stats is not counted.
     */
    public Stats stats() {
        if (container.isSpringBoot()) {
            throw new UnsupportedOperationException("the Spring Boot test-app has no /stats");
        }
        Response response = get("/stats");
        Matcher m = STATS.matcher(response.body);
        if (response.status != 200 || !m.matches()) {
            throw new AssertionError("unexpected /stats answer: " + response + "\n" + output());
        }
        return new Stats(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)));
    }

    /** The fixture application's counters at one moment. */
    public record Stats(long servletCalls, long filterCalls, long asyncCompleted) {
    }

    /** An HTTP response: status, headers (names case-insensitive) and body text. */
    public static final class Response {
        public final int status;
        /** All headers, names looked up case-insensitively. */
        public final Map<String, List<String>> headers;
        public final String body;

        public Response(int status, Map<String, List<String>> headers, String body) {
            this.status = status;
            Map<String, List<String>> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            headers.forEach((name, values) -> copy.computeIfAbsent(name, k -> new ArrayList<>()).addAll(values));
            copy.replaceAll((name, values) -> List.copyOf(values));
            this.headers = Collections.unmodifiableMap(copy);
            this.body = body;
        }

        public int status() {
            return status;
        }

        public Map<String, List<String>> headers() {
            return headers;
        }

        public String body() {
            return body;
        }

        /** The first value of a header, case-insensitive, or null. */
        public String header(String name) {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }

        /** All values of a header, case-insensitive; empty when absent. */
        public List<String> headerValues(String name) {
            return headers.getOrDefault(name, List.of());
        }

        @Override
        public String toString() {
            return status + " " + headers + "\n" + body;
        }
    }

    /** Minimal HTTP/1.1 response parsing for {@link #raw}. */
    private static final class RawHttp {
        private RawHttp() {
        }

        static Response read(InputStream in) throws IOException {
            while (true) {
                String statusLine = line(in);
                if (statusLine == null) {
                    throw new IOException("connection closed before a response");
                }
                String[] parts = statusLine.split(" ", 3);
                if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
                    throw new IOException("not an HTTP status line: " + statusLine);
                }
                int status = Integer.parseInt(parts[1]);
                Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                for (String header = line(in); header != null && !header.isEmpty(); header = line(in)) {
                    int colon = header.indexOf(':');
                    if (colon > 0) {
                        headers.computeIfAbsent(header.substring(0, colon).trim(), k -> new ArrayList<>())
                                .add(header.substring(colon + 1).trim());
                    }
                }
                if (status >= 100 && status < 200) {
                    continue; // interim response (100 Continue): the real one follows
                }
                byte[] body;
                String transfer = first(headers, "Transfer-Encoding");
                String length = first(headers, "Content-Length");
                if (transfer != null && transfer.toLowerCase(Locale.ROOT).contains("chunked")) {
                    body = chunked(in);
                } else if (length != null) {
                    body = in.readNBytes(Integer.parseInt(length.trim()));
                } else if (status == 204 || status == 304) {
                    body = new byte[0];
                } else {
                    body = in.readAllBytes();
                }
                return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
            }
        }

        private static String first(Map<String, List<String>> headers, String name) {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }

        private static byte[] chunked(InputStream in) throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            while (true) {
                String sizeLine = line(in);
                if (sizeLine == null) {
                    return body.toByteArray();
                }
                int semicolon = sizeLine.indexOf(';');
                int size = Integer.parseInt((semicolon >= 0 ? sizeLine.substring(0, semicolon) : sizeLine).trim(), 16);
                if (size == 0) {
                    for (String trailer = line(in); trailer != null && !trailer.isEmpty(); trailer = line(in)) {
                        // trailers ignored
                    }
                    return body.toByteArray();
                }
                body.write(in.readNBytes(size));
                line(in);
            }
        }

        /** One line without its CR LF (ISO-8859-1), or null at the end of the stream. */
        private static String line(InputStream in) throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) != -1) {
                if (b == '\n') {
                    break;
                }
                line.write(b);
            }
            if (b == -1 && line.size() == 0) {
                return null;
            }
            String s = line.toString(StandardCharsets.ISO_8859_1);
            return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
        }
    }
}
