package dev.ratelimit.demo;

import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Endpoints whose limits sit on methods inside them, not on the HTTP route. */
@RestController
public class MessageController {
    private final MessageService messages;
    private final ReportService reports;

    public MessageController(MessageService messages, ReportService reports) {
        this.messages = messages;
        this.reports = reports;
    }

    @PostMapping("/api/messages")
    public Map<String, Object> send(@RequestParam String user, @RequestParam(defaultValue = "hi") String text) {
        long id = messages.send(new Message(user, text));
        return Map.of("id", id, "user", user);
    }

    @GetMapping("/api/reports/{user}")
    public Map<String, Object> report(@PathVariable String user) {
        return Map.of("user", user, "rows", reports.export(user));
    }
}
