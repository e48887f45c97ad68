package dev.ratelimit.demo;

import dev.ratelimit.annotation.RateLimited;
import org.springframework.stereotype.Service;

/** An expensive export, limited by annotation; the rule file's {@code report-export} sets the limit. */
@Service
public class ReportService {

    @RateLimited("report-export")
    public int export(String user) {
        return user.length() * 100;
    }
}
