package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RuleFileWatcherTest {

    static String rules(int limit) {
        return "version: 1\nrules:\n  - name: r\n    key: global\n    limit: " + limit + "\n    window: 1s\n";
    }

    /**
     * At start-up the agent reads the file in premain and starts watching it only once the rest of
     * the agent is built; an edit made in between must still be applied, so the watcher compares
     * with the content as it was read.
     */
    @Test
    void anEditMadeBeforeWatchingStartsIsAppliedWhenGivenTheBaselineOfTheLoad(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(5));
        RuleSet loaded = ConfigLoader.load(file);
        byte[] baseline = RuleFileWatcher.baseline(file, loaded);
        Files.writeString(file, rules(7));
        CompletableFuture<RuleSet> reloaded = new CompletableFuture<>();
        RuleFileWatcher watcher = new RuleFileWatcher(file, name -> null, loaded, new RuleFileWatcher.Listener() {
            @Override
            public void loaded(RuleSet rules) {
                reloaded.complete(rules);
            }

            @Override
            public void rejected(List<ConfigError> errors) {
                reloaded.completeExceptionally(new AssertionError(errors.toString()));
            }

            @Override
            public void missing() {
                reloaded.completeExceptionally(new AssertionError("missing"));
            }
        }, baseline).start();
        try {
            assertEquals(7, reloaded.get(10, TimeUnit.SECONDS).rules().get(0).limits().get(0).limit());
        } finally {
            watcher.stop();
        }
    }
}
