package dev.ratelimit;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The agent's version, from the build. */
public final class Version {
    /** The version string, e.g. {@code 0.1.0}. */
    public static final String VERSION = read();

    private Version() {
    }

    private static String read() {
        try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
            Properties properties = new Properties();
            if (in != null) {
                properties.load(in);
            }
            return properties.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
