package dev.ratelimit.cli;

import dev.ratelimit.Version;
import java.io.File;
import java.io.PrintStream;

/** {@code java -jar rate-limit-agent.jar COMMAND}: {@code check FILE}, {@code attach PID [FILE]}, {@code version}. */
public final class CommandLine {
    private static final String USAGE = String.join(System.lineSeparator(),
            "usage: java -jar rate-limit-agent.jar COMMAND",
            "  check FILE    validate a rule file and print the rules as understood",
            "  attach PID [FILE]  load the agent into a running JVM (with FILE as its rule file)",
            "  version       print the version",
            "as an agent:   java -javaagent:rate-limit-agent.jar=config=FILE -jar app.jar");

    private CommandLine() {
    }

    /** Runs a command; returns the exit status. Called by {@code AgentLauncher.main}. */
    public static int run(String[] args, File agentJar) {
        return run(args, agentJar, System.out, System.err);
    }

    static int run(String[] args, File agentJar, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println(USAGE);
            return 2;
        }
        switch (args[0]) {
            case "check":
                if (args.length != 2) {
                    err.println("usage: java -jar rate-limit-agent.jar check FILE");
                    return 2;
                }
                return CheckCommand.run(args[1], out, err);
            case "attach":
                if (args.length < 2 || args.length > 3) {
                    err.println("usage: java -jar rate-limit-agent.jar attach PID [FILE]");
                    return 2;
                }
                return AttachCommand.run(args[1], args.length == 3 ? args[2] : null, agentJar, out, err);
            case "version":
            case "--version":
                if (args.length != 1) {
                    // as check and attach refuse what they do not take
                    err.println("usage: java -jar rate-limit-agent.jar version");
                    return 2;
                }
                out.println("rate-limit-agent " + Version.VERSION);
                return 0;
            case "help":
            case "--help":
            case "-h":
                out.println(USAGE);
                return 0;
            default:
                err.println("unknown command '" + args[0] + "'");
                err.println(USAGE);
                return 2;
        }
    }
}
