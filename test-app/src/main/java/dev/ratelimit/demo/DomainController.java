package dev.ratelimit.demo;

import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** Custom-domain lookup: the edge asks which published app serves a host name. */
@RestController
public class DomainController {
    private final Map<String, String> apps = Map.of(
            "shop.example.com", "app-shop",
            "blog.example.com", "app-blog");

    @GetMapping("/api/domains/{host}")
    public ResponseEntity<Map<String, String>> lookup(@PathVariable String host) {
        String app = apps.get(host);
        if (app == null) {
            return ResponseEntity.notFound().build();
        }
        return ResponseEntity.ok(Map.of("host", host, "app", app));
    }
}
