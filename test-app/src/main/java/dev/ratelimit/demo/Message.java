package dev.ratelimit.demo;

/** A chat message; the rule file limits sending per {@code userId}. */
public record Message(String userId, String text) {
}
