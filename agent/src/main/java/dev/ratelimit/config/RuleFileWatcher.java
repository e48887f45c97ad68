package dev.ratelimit.config;

import dev.ratelimit.bootstrap.RateLimitBridge;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Watches a rule file, and the token files it names, for changes, and hands each new version to
 * a listener: a valid one as a {@link RuleSet}, an invalid one as its errors, once.
 *
 * <p>It polls the content, not file-system events: a digest of the file's bytes and of every
 * {@code ${file:...}} token file, a few times a second. That sees every way a file is replaced:
 * in-place writes, editors that write a temporary file and rename it, deletion followed by
 * re-creation, and Kubernetes ConfigMap volumes, which swap a {@code ..data} symlink (the path
 * is re-resolved on every read). A change is acted on once the content has stayed the same for
 * one more poll, so a file caught half-written is not reported as an error; an empty rule or
 * token file (a redirect's, until its command writes), or a missing token file (deleted to be
 * written again), once it has stayed so for 2 s.
 */
public final class RuleFileWatcher {
    /** What a watcher reports. Called on the watcher's thread, one call at a time. */
    public interface Listener {
        void loaded(RuleSet rules);

        void rejected(List<ConfigError> errors);

        /** The file is gone (or unreadable); the previous rules stay in force. */
        void missing();

        /**
         * The file reported {@link #missing} can be read again and holds the version last looked
         * at (loaded or refused): nothing to reload, but no longer missing.
         */
        void back();
    }

    private static final long POLL_MILLIS = 250;
    /**
     * Looks an empty file must stay empty before it is taken for a version (2 s): a shell
     * redirect ({@code command > rules.yaml}) empties the file at once and fills it only once
     * the command writes, which may take a second or more ({@code kubectl}, {@code curl}).
     */
    static final int EMPTY_LOOKS = 8;

    private final Path file;
    private final Function<String, String> env;
    private final Listener listener;
    private volatile List<Path> tokenFiles;
    private byte[] applied;
    private byte[] pending;
    /** How many looks in a row have seen {@link #pending}. */
    private int pendingLooks;
    private boolean reportedMissing;
    private volatile boolean stopped;

    /**
     * @param current the rules now in force, loaded from {@code file}: their content is the baseline
     */
    public RuleFileWatcher(Path file, Function<String, String> env, RuleSet current, Listener listener) {
        this(file, env, current, listener, null);
    }

    /**
     * @param current the rules now in force, loaded from {@code file}; or, when the file was
     *     refused at start-up and the agent runs without its rules ({@code on-config-error=disable}),
     *     rules not read from it (no {@linkplain RuleSet#contentDigest() content digest})
     * @param baseline {@link #baseline} taken when {@code current} was loaded (an edit made since
     *     then is then seen as one), or null to take it now
     */
    public RuleFileWatcher(Path file, Function<String, String> env, RuleSet current, Listener listener,
            byte[] baseline) {
        this.file = file;
        this.env = env;
        this.listener = listener;
        this.tokenFiles = readFromFile(current) ? tokenFiles(current) : referencedTokenFiles(content());
        this.applied = baseline != null ? baseline : baseline(file, current);
    }

    /**
     * Whether {@code rules} were read from the file. Rules that were not stand for a version
     * refused at start-up: as after a refused edit, the token files its text names are watched,
     * so that creating one it was missing loads it.
     */
    private static boolean readFromFile(RuleSet rules) {
        return rules.contentDigest() != null;
    }

    /**
     * The content of the rule file and its token files, as a watcher created later compares it:
     * the rule file as {@code current} was read from it (so that an edit made since, even while
     * it was being read, is seen as one), and the token files now.
     */
    public static byte[] baseline(Path file, RuleSet current) {
        RuleFileWatcher watcher = new RuleFileWatcher(file, name -> null, current, null, new byte[0]);
        byte[] read = current.contentDigest();
        if (read == null) {
            byte[] content = watcher.content();
            read = content == null ? null : TokenSource.sha256(content);
        }
        return read == null ? null : watcher.fingerprint(read);
    }

    /** Starts watching on a daemon thread. */
    public RuleFileWatcher start() {
        Thread thread = new Thread(this::run, "rate-limit-agent-config-watcher");
        thread.setDaemon(true);
        // not the starting thread's: an attach starts it on the JVM's Attach Listener, priority 9
        thread.setPriority(Thread.NORM_PRIORITY);
        thread.start();
        return this;
    }

    public void stop() {
        stopped = true;
    }

    private void run() {
        while (!stopped) {
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            try {
                poll();
            } catch (Throwable t) {
                // whatever a look or a reload throws (an Error from a retransformation, say) must
                // not end the watching: counted and logged once, and the next edit is looked at
                RateLimitBridge.agentError("watching the rule file", t, "the rules in force stay, and the watching goes on");
            }
        }
    }

    /** One look at the files; public for tests that drive the watcher without its thread. */
    void poll() {
        byte[] content = content();
        byte[] now = content == null ? null : fingerprint(TokenSource.sha256(content));
        if (now == null) {
            if (!reportedMissing) {
                reportedMissing = true;
                listener.missing();
            }
            pending = null;
            return;
        }
        // "missing" stands until a version is settled (loaded, refused, or back as it was): a
        // first read that catches the returning file half-written settles nothing
        if (Arrays.equals(now, applied)) {
            pending = null;
            if (reportedMissing) {
                reportedMissing = false;
                listener.back();
            }
            return;
        }
        if (!Arrays.equals(now, pending)) {
            pending = now;
            pendingLooks = 1;
            return;
        }
        pendingLooks++;
        // The version loaded is the content read above, and what is compared from now on is
        // that content's digest: an edit saved while this one is read is seen at the next poll.
        byte[] read = TokenSource.sha256(content);
        RuleSet rules;
        try {
            rules = ConfigLoader.load(file, content, env);
        } catch (ConfigException e) {
            // an empty rule or token file is what a redirect leaves until its command writes, and
            // a missing token file what a rotation by rm and a write leaves: a version refused
            // while one is so is reported only once it has stayed so a while, not between the two.
            // Only a refused version waits: a valid one loads at once, whatever its comments name
            if (pendingLooks < EMPTY_LOOKS && anEmptyFile(content)) {
                return;
            }
            settle();
            // the token files this version names are watched too, so that creating one that is
            // missing is a change (the rule file itself may not change again)
            tokenFiles = referencedTokenFiles(content);
            applied = fingerprint(read);
            listener.rejected(e.errors());
            return;
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            // a bug of ours in the reader must not end the watching: report the version as rejected
            settle();
            applied = now;
            listener.rejected(List.of(new ConfigError(file.toString(), 1, 1,
                    "the rule file could not be read (" + e.getClass().getSimpleName() + ")")));
            return;
        }
        settle();
        tokenFiles = tokenFiles(rules);
        applied = fingerprint(read);
        listener.loaded(rules);
    }

    /** A version is settled (loaded or refused): nothing pending, and the file no longer missing. */
    private void settle() {
        pending = null;
        reportedMissing = false;
    }

    /**
     * Whether the rule file ({@code content}) is empty, or a token file it names is empty or
     * missing: the new version's, not only the version in force's (an edit that names a token
     * file for the first time, the file created empty and then written, logged an error in
     * between), and missing as well as empty (a rotation by {@code rm} and a write). A token file
     * only the version in force names is not waited for: the new version does not read it. Asked
     * of a refused version only: the text's references include those in comments, and a valid
     * version naming a missing file in a comment waited 2 s (the review of the thirty-sixth
     * round's commits).
     */
    private boolean anEmptyFile(byte[] content) {
        if (content.length == 0) {
            return true;
        }
        for (Path token : referencedTokenFiles(content)) {
            try {
                if (!Files.exists(token) || (Files.isRegularFile(token) && Files.size(token) == 0)) {
                    return true;
                }
            } catch (IOException | SecurityException e) {
                // not readable: the load says so
            }
        }
        return false;
    }

    /** The rule file's bytes (at most one more than the size limit), or null when it cannot be read as a file. */
    private byte[] content() {
        try {
            if (!Files.isRegularFile(file)) {
                // missing, or a device or a pipe, which reading could block on or never finish
                return null;
            }
            return ConfigLoader.readAtMost(file, ConfigLoader.MAX_FILE_SIZE);
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /** The token files a rule file's text names (none when it cannot be read), resolved as the reader resolves them. */
    private List<Path> referencedTokenFiles(byte[] content) {
        List<Path> paths = new ArrayList<>();
        if (content == null) {
            return paths;
        }
        Path parent = file.toAbsolutePath().getParent();
        for (String reference : TokenReader.fileReferences(new String(content, StandardCharsets.UTF_8))) {
            try {
                paths.add(parent == null ? Path.of(reference) : parent.resolve(reference));
            } catch (java.nio.file.InvalidPathException e) {
                // the rejection names it; nothing to watch
            }
        }
        return paths;
    }

    private List<Path> tokenFiles(RuleSet rules) {
        List<Path> paths = new ArrayList<>();
        Path parent = file.toAbsolutePath().getParent();
        for (TokenSource token : rules.exempt().tokens()) {
            if (token.kind() == TokenSource.Kind.FILE) {
                paths.add(parent == null ? Path.of(token.reference()) : parent.resolve(token.reference()));
            }
        }
        return paths;
    }

    /** A digest of the rule file (its digest {@code ruleFile}) and of its token files as they are now. */
    private byte[] fingerprint(byte[] ruleFile) {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by the Java platform", e);
        }
        digest.update(ruleFile);
        for (Path token : tokenFiles) {
            digest.update(token.toString().getBytes(StandardCharsets.UTF_8));
            try {
                // no further than the reader reads it: past its limit a token file is refused,
                // whatever it holds there
                digest.update(Files.isRegularFile(token) ? ConfigLoader.readAtMost(token, TokenReader.MAX_TOKEN_FILE_SIZE)
                        : new byte[] {1});
            } catch (IOException | SecurityException e) {
                digest.update((byte) 0);
            }
        }
        return digest.digest();
    }
}
