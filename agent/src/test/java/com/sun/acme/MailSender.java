package com.sun.acme;

import dev.ratelimit.annotation.RateLimited;

/**
 * An application's own class in a {@code com.sun.} package, as Jakarta Mail 1.x
 * ({@code com.sun.mail.smtp}), Jersey 1 and the JAXB reference implementation ship: limited
 * like any other, by annotation and by a pattern of {@code fixture-rules.yaml}.
 */
public class MailSender {
    @RateLimited(limit = 2, window = "1h")
    public String send(String to) {
        return "sent to " + to;
    }

    public String queue(String to) {
        return "queued for " + to;
    }
}
