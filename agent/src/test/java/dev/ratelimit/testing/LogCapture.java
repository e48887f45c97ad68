package dev.ratelimit.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * The records the agent logs (logger {@code dev.ratelimit}) while it is open: use it in a
 * try-with-resources, or open it before and close it after each test.
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private static final Logger LOGGER = Logger.getLogger("dev.ratelimit");
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private LogCapture() {
    }

    /** Starts capturing. */
    public static LogCapture open() {
        LogCapture capture = new LogCapture();
        LOGGER.addHandler(capture);
        return capture;
    }

    /** The records so far, oldest first. */
    public List<LogRecord> records() {
        return List.copyOf(records);
    }

    /** The messages so far, oldest first. */
    public List<String> messages() {
        return records.stream().map(LogRecord::getMessage).collect(Collectors.toList());
    }

    /** The messages of this level so far, oldest first. */
    public List<String> messages(Level level) {
        return records.stream().filter(record -> record.getLevel() == level).map(LogRecord::getMessage)
                .collect(Collectors.toList());
    }

    @Override
    public void publish(LogRecord record) {
        records.add(record);
    }

    @Override
    public void flush() {
    }

    /** Stops capturing; the records stay readable. */
    @Override
    public void close() {
        LOGGER.removeHandler(this);
    }
}
