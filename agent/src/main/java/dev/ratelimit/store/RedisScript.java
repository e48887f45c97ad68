package dev.ratelimit.store;

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
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder(40);
            for (byte b : digest) {
                hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by the Java platform", e);
        }
    }
}
