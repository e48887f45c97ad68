package dev.ratelimit.instrument;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class AgentOptionsTest {

    @Test
    void optionsAreReadAndDefaultsKept() {
        AgentOptions options = AgentOptions.parse("config=/etc/rules.yaml,log=DEBUG,on-config-error=disable", null);
        assertEquals("/etc/rules.yaml", options.config);
        assertEquals("debug", options.log);
        assertEquals(AgentOptions.OnConfigError.DISABLE, options.onConfigError);
        assertEquals(List.of(), options.errors);
        assertEquals("from-env.yaml", AgentOptions.parse(null, "from-env.yaml").config);
        assertEquals("bare.yaml", AgentOptions.parse("bare.yaml", "from-env.yaml").config);
    }

    /**
     * The options are split at commas, so a path holding one came out as two, and the second,
     * bare, silently replaced the first: the agent read another file than the one named.
     */
    @Test
    void aSecondRuleFileIsAnErrorNotASilentSwitch() {
        AgentOptions options = AgentOptions.parse("config=/tmp/rv/x,y", null);
        assertEquals("/tmp/rv/x", options.config);
        assertEquals(List.of("agent options name two rule files ('/tmp/rv/x' and 'y'); a path with a comma in it"
                + " can be given in RATELIMIT_CONFIG instead"), options.errors);
        assertEquals(1, AgentOptions.parse("a.yaml,config=b.yaml", null).errors.size());
    }

    /** on-config-error=disable holds whatever else is wrong: every option is read. */
    @Test
    void disableHoldsForAnInvalidOptionWhereverItIs() {
        AgentOptions options = AgentOptions.parse("config=hr.yaml,log=verbose,on-config-error=disable,colour=red", null);
        assertEquals(AgentOptions.OnConfigError.DISABLE, options.onConfigError);
        assertEquals("info", options.log);
        assertEquals(List.of("agent option log=verbose: expected error, warn, info or debug",
                "unknown agent option 'colour': expected config, log or on-config-error"), options.errors);
        assertEquals(AgentOptions.OnConfigError.EXIT, AgentOptions.parse("log=verbose", null).onConfigError);
    }

    /**
     * An empty element between commas is no option: it was read as a bare, empty config path, so
     * "rules.yaml,,log=warn" stopped the JVM (exit 78) saying the options named two rule files,
     * and with on-config-error=disable dropped every rule of a valid file.
     */
    @Test
    void anEmptyElementIsSkippedWhereverItIs() {
        for (String text : List.of("rules.yaml,,log=warn", ",rules.yaml,log=warn", "config=rules.yaml, ,log=warn,")) {
            AgentOptions options = AgentOptions.parse(text, null);
            assertEquals(List.of(), options.errors, text);
            assertEquals("rules.yaml", options.config, text);
            assertEquals("warn", options.log, text);
        }
    }

    /**
     * An empty {@code config=} is an error, and the file watched under disable is the default's:
     * RATELIMIT_CONFIG, else ratelimit.yaml (it was ratelimit.yaml whatever the variable said).
     */
    @Test
    void anEmptyConfigFallsBackToTheDefault() {
        AgentOptions fromEnvironment = AgentOptions.parse("config=,on-config-error=disable", "/etc/app/rules.yaml");
        assertEquals(List.of("agent option config is empty"), fromEnvironment.errors);
        assertEquals("/etc/app/rules.yaml", fromEnvironment.config);
        assertEquals("ratelimit.yaml", AgentOptions.parse("config=", null).config);
    }

    /** log's values are read in any case; on-config-error's were not, and DISABLE stopped the JVM. */
    @Test
    void onConfigErrorIsReadInAnyCase() {
        AgentOptions options = AgentOptions.parse("config=bad.yaml,on-config-error=DISABLE", null);
        assertEquals(List.of(), options.errors);
        assertEquals(AgentOptions.OnConfigError.DISABLE, options.onConfigError);
        assertEquals(AgentOptions.OnConfigError.EXIT, AgentOptions.parse("on-config-error=Exit", null).onConfigError);
    }

    /**
     * A repeated option was last-wins without a word, so "on-config-error=disable,...,
     * on-config-error=exit" stopped the JVM the first meant to keep up (attach review): it is an
     * error, and disable holds wherever either stands.
     */
    @Test
    void aRepeatedOptionIsAnErrorAndDisableHoldsWhereverItStands() {
        for (String text : List.of("config=bad.yaml,on-config-error=disable,on-config-error=exit",
                "config=bad.yaml,on-config-error=exit,on-config-error=disable")) {
            AgentOptions options = AgentOptions.parse(text, null);
            assertEquals(AgentOptions.OnConfigError.DISABLE, options.onConfigError, text);
            assertEquals(List.of("agent option on-config-error is given twice"), options.errors, text);
        }
        AgentOptions logTwice = AgentOptions.parse("log=warn,log=debug", null);
        assertEquals("warn", logTwice.log, "the first stands");
        assertEquals(List.of("agent option log is given twice"), logTwice.errors);
        assertEquals(AgentOptions.OnConfigError.EXIT, logTwice.onConfigError);
    }
}
