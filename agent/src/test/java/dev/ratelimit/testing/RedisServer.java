package dev.ratelimit.testing;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import redis.clients.jedis.Jedis;

/**
 * A real {@code redis-server} on a free loopback port, started and stopped by a test. Under CI
 * (the {@code CI} variable is set) a missing binary fails the test; elsewhere the test is skipped
 * with a message saying how to install it.
 */
public final class RedisServer implements AutoCloseable {
    private int port;
    private final Path dir;
    private final List<String> options;
    private boolean tls;
    private Process process;

    private RedisServer(int port, Path dir, List<String> options) {
        this.port = port;
        this.dir = dir;
        this.options = options;
    }

    /** Starts a server, or skips (locally) / fails (CI) when redis-server is not installed. */
    public static RedisServer start() throws IOException, InterruptedException {
        return start(List.of());
    }

    /** Starts a server with extra command-line options, e.g. {@code --requirepass secret}. */
    public static RedisServer start(List<String> options) throws IOException, InterruptedException {
        return start(options, false);
    }

    private static RedisServer start(List<String> options, boolean tls) throws IOException, InterruptedException {
        String binary = binary();
        if (binary == null) {
            String message = "redis-server is not installed; install it with: apt-get install -y redis-server";
            if (System.getenv("CI") != null) {
                throw new IllegalStateException(message + " (CI must run the Redis tests)");
            }
            Assumptions.abort(message);
        }
        RedisServer server = new RedisServer(freePort(), Files.createTempDirectory("redis-test"), options);
        server.tls = tls;
        // the port was free when asked for, and is closed before redis-server binds it: another
        // process (a parallel test's server or proxy) may take it in between, and redis-server
        // then exits at once ("Address already in use"). Such a launch is tried again on a new
        // port, a few times; any other failure fails at once.
        for (int attempt = 1; ; attempt++) {
            try {
                server.launch();
                return server;
            } catch (PortTaken taken) {
                if (attempt >= LAUNCH_ATTEMPTS) {
                    throw new IllegalStateException("redis-server could not bind a free port in "
                            + LAUNCH_ATTEMPTS + " tries: " + taken.getMessage());
                }
                server.port = freePort();
            }
        }
    }

    private static final int LAUNCH_ATTEMPTS = 5;

    /** redis-server exited because another process had taken its port. */
    private static final class PortTaken extends IOException {
        PortTaken(String message) {
            super(message);
        }
    }

    /**
     * Starts a server that speaks only TLS on its port, with the given PEM certificate, key and
     * CA; clients need not present a certificate.
     */
    public static RedisServer startTls(Path cert, Path key, Path ca) throws IOException, InterruptedException {
        return start(List.of("--tls-cert-file", cert.toString(), "--tls-key-file", key.toString(),
                "--tls-ca-cert-file", ca.toString(), "--tls-auth-clients", "no"), true);
    }

    private static String binary() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            File candidate = new File(dir, "redis-server");
            if (candidate.canExecute()) {
                return candidate.getAbsolutePath();
            }
        }
        File usual = new File("/usr/bin/redis-server");
        return usual.canExecute() ? usual.getAbsolutePath() : null;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private void launch() throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of(binary(),
                "--port", tls ? "0" : Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                "--loglevel", "warning"));
        if (tls) {
            command.addAll(List.of("--tls-port", Integer.toString(port)));
        }
        command.addAll(options);
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                process.waitFor();
                String log = Files.readString(dir.resolve("redis.log"));
                if (log.contains("Address already in use")) {
                    throw new PortTaken("port " + port + ": " + log);
                }
                throw new IllegalStateException("redis-server exited (" + process.exitValue() + ") on port " + port
                        + ": " + log);
            }
            // the port answering is not enough: it may be the process that took it; the
            // listening socket must be this redis-server's (where /proc tells)
            if (listensHere() != Boolean.FALSE) {
                try (java.net.Socket probe = new java.net.Socket("127.0.0.1", port)) {
                    return;
                } catch (IOException notYet) {
                    // not yet accepting
                }
            }
            Thread.sleep(20);
        }
        process.destroyForcibly();
        throw new IllegalStateException("redis-server did not start on port " + port + ": "
                + Files.readString(dir.resolve("redis.log")));
    }

    /**
     * Whether this process holds a listening TCP socket on {@link #port} (Linux's /proc: a LISTEN
     * entry of /proc/net/tcp on the port whose inode is among the process's descriptors), or null
     * where /proc cannot tell.
     */
    private Boolean listensHere() {
        Path table = Path.of("/proc/net/tcp");
        Path fds = Path.of("/proc", Long.toString(process.pid()), "fd");
        if (!Files.isReadable(table) || !Files.isDirectory(fds)) {
            return null;
        }
        try {
            java.util.Set<String> inodes = new java.util.HashSet<>();
            String hexPort = String.format(":%04X", port);
            for (String line : Files.readAllLines(table)) {
                String[] fields = line.trim().split("\\s+");
                if (fields.length > 9 && fields[1].endsWith(hexPort) && fields[3].equals("0A")) {
                    inodes.add("socket:[" + fields[9] + "]");
                }
            }
            if (inodes.isEmpty()) {
                return false;
            }
            try (java.util.stream.Stream<Path> links = Files.list(fds)) {
                return links.anyMatch(link -> {
                    try {
                        return inodes.contains(Files.readSymbolicLink(link).toString());
                    } catch (IOException gone) {
                        return false;
                    }
                });
            }
        } catch (IOException | RuntimeException unreadable) {
            return null;
        }
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:PORT/0}, or {@code rediss://} for a TLS server. */
    public String uri() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port + "/0";
    }

    /** A client for inspecting the server; close it. */
    public Jedis client() {
        return new Jedis("127.0.0.1", port, 2000);
    }

    /** SIGSTOP: the server hangs with its connections open, as a stuck server does. */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** SIGCONT. */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " failed");
        }
    }

    /** Stops the server (connections are refused until {@link #restart}). */
    public void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts the server again on the same port, empty. */
    public void restart() throws IOException, InterruptedException {
        stop();
        launch();
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            resume();
        }
        stop();
    }
}
