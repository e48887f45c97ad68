package dev.ratelimit.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis store writes its log lines on a daemon thread of its own, so that a slow logger never
 * holds up a call past its timeout. A process that exits just after an outage began (a batch
 * job) lost the line that said so, the writer's thread ending with the JVM (the review of the
 * thirty-fourth round's fixes); lines still queued at exit are now written first, for at most a
 * second.
 */
class RedisLogAtExitIT {
    @TempDir
    Path dir;

    @Test
    void aLineStillBeingWrittenWhenTheJvmExitsIsWritten() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort(); // nothing listens there once it is closed
        }
        Path rules = Files.writeString(dir.resolve("rules.yaml"), String.join("\n",
                "version: 1",
                "store:",
                "  type: redis",
                "  on-error: reject",
                "  redis:",
                "    uri: redis://127.0.0.1:" + closedPort + "/0",
                "    timeout: 100ms",
                "rules:",
                "  - name: at-exit",
                "    match:",
                "      method: dev.ratelimit.fixture.SharedCounter#hit",
                "    key: arg0",
                "    limit: 1000",
                "    window: 1h",
                ""));
        for (Path jdk : Jdks.all().toList()) {
            ForkedJvm.Result result = ForkedJvm.run(jdk, List.of(
                    "-javaagent:" + ForkedJvm.agentJar() + "=config=" + rules,
                    "-cp", ForkedJvm.applicationClassPath(), "dev.ratelimit.fixture.LogLineAtExitMain", "400"),
                    Duration.ofMinutes(1));
            assertEquals(0, result.exitCode, result::toString);
            // the case under test: main returned before the handler had written the line
            assertTrue(result.stdout.contains("RESULT written-before-main-returned=false"), result::toString);
            assertTrue(result.stdout.contains("HANDLER WROTE rate-limit-agent: Redis at redis://127.0.0.1:" + closedPort
                    + "/0 is not answering ("), result::toString);
        }
    }
}
