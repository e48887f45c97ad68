package dev.ratelimit.demo;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small platform API, as in the incident that shaped the agent: published apps are served by
 * an edge that looks up custom domains here, an orchestrator saves agent turns here, and a gate
 * checks preview access here, all from a few shared addresses. The application has no rate
 * limiting of its own; run it under the agent with {@code config/rules.yaml}.
 */
@SpringBootApplication
public class DemoApplication {
    public static void main(String[] args) {
        SpringApplication.run(DemoApplication.class, args);
    }
}
