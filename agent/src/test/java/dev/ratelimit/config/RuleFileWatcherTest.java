package dev.ratelimit.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.testing.LogCapture;
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

            @Override
            public void back() {
                reloaded.completeExceptionally(new AssertionError("back"));
            }
        }, baseline).start();
        try {
            assertEquals(7, reloaded.get(10, TimeUnit.SECONDS).rules().get(0).limits().get(0).limit());
        } finally {
            watcher.stop();
        }
    }

    /**
     * An Error thrown while a version is applied (by a retransformation, say) once ended the
     * watcher's thread: every later edit was ignored, silently. It is counted as an agent error,
     * and the next edit is applied.
     */
    @Test
    void anErrorWhileApplyingAVersionDoesNotEndTheWatching(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(5));
        RuleSet loaded = ConfigLoader.load(file);
        CompletableFuture<RuleSet> applied = new CompletableFuture<>();
        long errors = RateLimitBridge.agentErrors();
        RuleFileWatcher watcher = new RuleFileWatcher(file, name -> null, loaded, new RuleFileWatcher.Listener() {
            @Override
            public void loaded(RuleSet rules) {
                if (rules.rules().get(0).limits().get(0).limit() == 6) {
                    throw new InternalError("thrown while applying");
                }
                applied.complete(rules);
            }

            @Override
            public void rejected(List<ConfigError> errors) {
                applied.completeExceptionally(new AssertionError(errors.toString()));
            }

            @Override
            public void missing() {
                applied.completeExceptionally(new AssertionError("missing"));
            }

            @Override
            public void back() {
                applied.completeExceptionally(new AssertionError("back"));
            }
        }, RuleFileWatcher.baseline(file, loaded)).start();
        try (LogCapture log = LogCapture.open()) {
            Files.writeString(file, rules(6));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // counted, then logged: wait for both
            while ((RateLimitBridge.agentErrors() == errors || log.messages().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(errors + 1, RateLimitBridge.agentErrors(), "the error is counted");
            // no call was on this path: the log said "the call was let through" of it
            String said = String.join("\n", log.messages());
            assertTrue(said.contains("watching the rule file; the rules in force stay, and the watching goes on"), said);
            assertFalse(said.contains("let through"), said);
            Files.writeString(file, rules(7));
            assertEquals(7, applied.get(10, TimeUnit.SECONDS).rules().get(0).limits().get(0).limit());
        } finally {
            watcher.stop();
        }
    }

    /** {@link #rules} with an exempt token given by {@code reference} (${env:...} or ${file:...}). */
    static String rulesWithToken(String reference, int limit) {
        return "version: 1\nexempt:\n  header: X-Token\n  tokens: [\"" + reference + "\"]\n"
                + rules(limit).substring("version: 1\n".length());
    }

    /** A watcher of {@code file}, not started, whose baseline is the version {@code loaded} came from. */
    private static RuleFileWatcher watcher(Path file, java.util.function.Function<String, String> env, RuleSet loaded,
            Events events) {
        return new RuleFileWatcher(file, env, loaded, events, RuleFileWatcher.baseline(file, loaded));
    }

    private static void poll(RuleFileWatcher watcher, int times) {
        for (int i = 0; i < times; i++) {
            watcher.poll();
        }
    }

    /** What a watcher reported, in order: "loaded N" (the first rule's limit), "rejected", "missing". */
    private static final class Events implements RuleFileWatcher.Listener {
        final List<String> seen = new java.util.ArrayList<>();

        @Override
        public void loaded(RuleSet rules) {
            seen.add("loaded " + rules.rules().get(0).limits().get(0).limit());
        }

        @Override
        public void rejected(List<ConfigError> errors) {
            seen.add("rejected");
        }

        @Override
        public void missing() {
            seen.add("missing");
        }

        @Override
        public void back() {
            seen.add("back");
        }
    }

    /**
     * A file that goes missing and comes back with the same bytes (a delete-and-copy deploy) is
     * said to be back, once: nothing is reloaded, and what reported it missing (the agent MBean's
     * LastReloadOutcome) hears that it is not any more. It once heard nothing, and reported a
     * missing rule file until the next real edit (review of the twenty-first round).
     */
    @Test
    void aFileBackWithTheSameBytesIsSaidToBeBackOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        poll(watcher, 2);
        Files.delete(file);
        poll(watcher, 3);
        Files.writeString(file, rules(1));
        poll(watcher, 3);
        assertEquals(List.of("missing", "back"), events.seen);
        Files.delete(file);
        poll(watcher, 2);
        Files.writeString(file, rules(2));
        poll(watcher, 3);
        assertEquals(List.of("missing", "back", "missing", "loaded 2"), events.seen, "back with an edit: loaded");
    }

    /** The first look at the returning file catches it half-written (a copy under way): still back, once. */
    @Test
    void aFileCaughtHalfWrittenOnItsWayBackIsStillSaidToBeBack(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.delete(file);
        poll(watcher, 2);
        Files.writeString(file, rules(1).substring(0, 20));
        poll(watcher, 1);
        Files.writeString(file, rules(1));
        poll(watcher, 4);
        assertEquals(List.of("missing", "back"), events.seen);
    }

    /**
     * An edit saved while the watcher reads the version before it is loaded at a later poll. The
     * watcher once took its digest of the file after loading, so the edit looked applied and was
     * never loaded. Here the edit is saved from inside the load (the environment lookup).
     */
    @Test
    void anEditSavedWhileAVersionIsReadIsLoadedToo(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        boolean[] edited = {false};
        RuleFileWatcher watcher = watcher(file, name -> {
            if (!edited[0]) {
                edited[0] = true;
                try {
                    Files.writeString(file, rules(3));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            return "a-token-of-some-length-0123456789";
        }, loaded, events);
        Files.writeString(file, rulesWithToken("${env:TOKEN}", 2));
        poll(watcher, 6);
        assertEquals(List.of("loaded 2", "loaded 3"), events.seen);
    }

    /**
     * A version rejected because a token file it names is missing is loaded once the file is
     * created: the token files a rejected version names are watched too. They once were not,
     * and creating the file changed nothing until the rule file was touched again.
     */
    @Test
    void aTokenFileMissingFromARejectedVersionIsWatched(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.writeString(file, rulesWithToken("${file:new-token.txt}", 4));
        // a token file a version names and that does not exist is waited for, as an empty one
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS - 1);
        assertEquals(List.of(), events.seen, "waited for");
        poll(watcher, 1);
        assertEquals(List.of("rejected"), events.seen);
        poll(watcher, 1);
        assertEquals(List.of("rejected"), events.seen, "rejected once");
        Files.writeString(dir.resolve("new-token.txt"), "a-token-of-some-length-0123456789\n");
        poll(watcher, 2);
        assertEquals(List.of("rejected", "loaded 4"), events.seen);
    }

    /**
     * A version refused at start-up for a missing token file, the agent running without its rules
     * ({@code on-config-error=disable} puts an empty rule set in force): creating the token file
     * loads it, as after a refused edit. The watcher once watched only the empty set's token
     * files, none, and waited for an edit of the rule file itself.
     */
    @Test
    void aTokenFileMissingFromAVersionRefusedAtStartUpIsWatched(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rulesWithToken("${file:token.txt}", 5));
        assertThrows(ConfigException.class, () -> ConfigLoader.load(file));
        RuleSet inForce = RuleSet.empty(file.toString());
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, inForce, events);
        poll(watcher, 3);
        assertEquals(List.of(), events.seen, "the refused version is the baseline: nothing to report");
        Files.writeString(dir.resolve("token.txt"), "a-token-of-some-length-0123456789\n");
        poll(watcher, 2);
        assertEquals(List.of("loaded 5"), events.seen);
    }

    /**
     * At start-up the file is read once: an edit made while premain reads it (after its bytes
     * were read, before the watcher's baseline) is loaded by the watcher, not taken as the
     * version in force.
     */
    @Test
    void theBaselineIsTheContentTheRulesWereReadFrom(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        byte[] content = ConfigLoader.read(file);
        Files.writeString(file, rules(2));
        RuleSet loaded = ConfigLoader.load(file, content, name -> null);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        poll(watcher, 2);
        assertEquals(List.of("loaded 2"), events.seen);
    }

    /**
     * {@code slow-command > rules.yaml}: the shell empties the file at once, and the command
     * fills it a second or more later ({@code kubectl}, {@code curl}). The empty file, seen the
     * same at two looks, was reported as an invalid edit ("the rule file is empty", at SEVERE,
     * and in LastReloadOutcome) before the real edit loaded (the hot-reload review).
     */
    @Test
    void aFileEmptiedByARedirectIsNotReportedBeforeItsCommandWrites(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.write(file, new byte[0]);
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS - 1);
        assertEquals(List.of(), events.seen, "an empty file is waited for");
        Files.writeString(file, rules(2));
        poll(watcher, 2);
        assertEquals(List.of("loaded 2"), events.seen);
    }

    /** A file that stays empty is an invalid edit, reported once. */
    @Test
    void aFileThatStaysEmptyIsReportedOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.write(file, new byte[0]);
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS);
        assertEquals(List.of("rejected"), events.seen);
        poll(watcher, 3 * RuleFileWatcher.EMPTY_LOOKS);
        assertEquals(List.of("rejected"), events.seen, "reported once");
    }

    /** A token file rotated by a redirect ({@code vault read -field=token ... > token.txt}) is waited for too. */
    @Test
    void aTokenFileEmptiedByARedirectIsNotReportedBeforeItsCommandWrites(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Path token = Files.writeString(dir.resolve("token.txt"), "a-token-of-some-length-0123456789\n");
        Files.writeString(file, rulesWithToken("${file:token.txt}", 6));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.write(token, new byte[0]);
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS - 1);
        assertEquals(List.of(), events.seen, "an empty token file is waited for");
        Files.writeString(token, "another-token-of-some-length-9876543210\n");
        poll(watcher, 2);
        assertEquals(List.of("loaded 6"), events.seen);
    }

    /**
     * An edit that names a token file for the first time, the file created empty and then
     * written: the empty file is waited for, as one the version in force names. It was not,
     * and a normal rollout logged an error before it loaded (the review of operations,
     * thirty-sixth round).
     */
    @Test
    void aTokenFileAnEditNamesForTheFirstTimeIsWaitedForWhileEmpty(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Path token = Files.write(dir.resolve("new.txt"), new byte[0]);
        Files.writeString(file, rulesWithToken("${file:new.txt}", 8));
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS - 1);
        assertEquals(List.of(), events.seen, "the new token file, empty, is waited for");
        Files.writeString(token, "a-token-of-some-length-0123456789\n");
        poll(watcher, 2);
        assertEquals(List.of("loaded 8"), events.seen);
    }

    /**
     * A valid edit loads at the next look, whatever token files its comments name: only a
     * refused version waits for an empty or missing token file. A commented-out reference to a
     * retired token file held every edit 2 s (the review of the thirty-sixth round's commits).
     */
    @Test
    void aValidEditNamingAMissingTokenFileInACommentLoadsAtOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Files.writeString(file, rules(1));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.writeString(file, "# retired: ${file:/run/secrets/retired-token}\n" + rules(7));
        poll(watcher, 2);
        assertEquals(List.of("loaded 7"), events.seen);
    }

    /** A token file rotated by deleting it and writing it again is waited for while it is missing. */
    @Test
    void aTokenFileDeletedAndWrittenAgainIsWaitedFor(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Path token = Files.writeString(dir.resolve("token.txt"), "a-token-of-some-length-0123456789\n");
        Files.writeString(file, rulesWithToken("${file:token.txt}", 9));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        Files.delete(token);
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS - 1);
        assertEquals(List.of(), events.seen, "a missing token file is waited for");
        Files.writeString(token, "another-token-of-some-length-9876543210\n");
        poll(watcher, 2);
        assertEquals(List.of("loaded 9"), events.seen);
        Files.delete(token);
        poll(watcher, RuleFileWatcher.EMPTY_LOOKS);
        assertEquals(List.of("loaded 9", "rejected"), events.seen, "one that stays missing is refused after 2 s");
    }

    /**
     * A token file is looked at no further than the reader reads it (64 KB): the watcher read up
     * to 1 MB of each four times a second, and took a change past 64 KB of a file too large to be
     * a token file for a new version, refused again.
     */
    @Test
    void aTokenFileIsLookedAtNoFurtherThanItIsRead(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules.yaml");
        Path token = Files.writeString(dir.resolve("token.txt"), "a-token-of-some-length-0123456789\n");
        Files.writeString(file, rulesWithToken("${file:token.txt}", 7));
        RuleSet loaded = ConfigLoader.load(file);
        Events events = new Events();
        RuleFileWatcher watcher = watcher(file, name -> null, loaded, events);
        byte[] large = new byte[200 * 1024];
        java.util.Arrays.fill(large, (byte) 'a');
        Files.write(token, large);
        poll(watcher, 2);
        assertEquals(List.of("rejected"), events.seen, "a token file over 64 KB");
        large[150 * 1024] = 'b';
        Files.write(token, large);
        poll(watcher, 4);
        assertEquals(List.of("rejected"), events.seen, "a change past 64 KB changes nothing the reader reads");
    }
}
