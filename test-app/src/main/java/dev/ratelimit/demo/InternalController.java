package dev.ratelimit.demo;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Routes only the platform's own services may use. They check the internal token themselves
 * (401 without it), independently of the rate limiter.
 */
@RestController
public class InternalController {
    private final byte[] token;
    private final Map<String, String> turns = new ConcurrentHashMap<>();

    public InternalController() {
        String configured = System.getenv("RATELIMIT_INTERNAL_TOKEN");
        this.token = configured == null || configured.isEmpty() ? null : configured.getBytes(StandardCharsets.UTF_8);
    }

    private boolean authorized(String presented) {
        return token != null && presented != null
                && MessageDigest.isEqual(token, presented.getBytes(StandardCharsets.UTF_8));
    }

    /** The orchestrator saves a running agent turn's progress. */
    @PostMapping("/internal/turns/{id}")
    public ResponseEntity<Map<String, String>> saveTurn(@PathVariable String id,
            @RequestHeader(value = "X-Internal-Token", required = false) String presented,
            @RequestBody(required = false) String progress) {
        if (!authorized(presented)) {
            return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", "internal token required"));
        }
        turns.put(id, progress == null ? "" : progress);
        return ResponseEntity.ok(Map.of("turn", id, "saved", "true"));
    }

    /** The preview gate asks whether a visitor may see an unpublished app. */
    @GetMapping("/internal/preview-access")
    public ResponseEntity<Map<String, Object>> previewAccess(@RequestParam(defaultValue = "") String app,
            @RequestHeader(value = "X-Internal-Token", required = false) String presented) {
        if (!authorized(presented)) {
            return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", "internal token required"));
        }
        return ResponseEntity.ok(Map.of("app", app, "preview", true));
    }
}
