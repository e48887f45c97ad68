package dev.ratelimit.store;

import dev.ratelimit.Hex;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A Lua script shipped with the agent, called by its SHA-1 ({@code EVALSHA}); the store loads it
 * when the server answers {@code NOSCRIPT} (first use, a restart, a {@code SCRIPT FLUSH}).
 */
final class RedisScript {
    final String name;
    final String text;
    final String sha;

    private RedisScript(String name, String text) {
        this.name = name;
        this.text = text;
        this.sha = sha1(text);
    }

    static RedisScript load(String resource) {
        try (InputStream in = RedisScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("script " + resource + " is missing from the agent jar");
            }
            return new RedisScript(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script " + resource, e);
        }
    }

    private static String sha1(String text) {
        try {
            return Hex.of(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by the Java platform", e);
        }
    }
}
