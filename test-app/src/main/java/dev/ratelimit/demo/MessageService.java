package dev.ratelimit.demo;

import java.util.concurrent.atomic.AtomicLong;
import org.springframework.stereotype.Service;

/** Code the team "cannot change": limited by a {@code match: method} rule in the rule file. */
@Service
public class MessageService {
    private final AtomicLong ids = new AtomicLong();

    public long send(Message message) {
        return ids.incrementAndGet();
    }
}
