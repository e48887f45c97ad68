package dev.ratelimit.store;

import dev.ratelimit.config.RedisConfig;
import dev.ratelimit.limit.StoreUnavailableException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * The connection to a Redis (or Valkey) server shared by every rule of a rule file.
 *
 * <h2>Design</h2>
 *
 * <p>One round trip per decision: a Lua script that does every limit of the rule atomically on
 * the server ({@link RedisLimiter}). An application thread never waits longer than
 * {@code redis.timeout}: borrowing a connection and the command share one deadline.
 *
 * <p>When the server fails to answer (refused, reset, timed out), the store is marked down: every
 * call from then on fails at once, without touching the network, and each rule does what its
 * {@code on-error} says. One background thread probes the server with backoff (capped so that
 * recovery is noticed within a second) and marks the store up again, dropping the pooled
 * connections of the outage. The outage is logged once when it starts and once when it ends.
 * Errors the server reports (for example out of memory under {@code noeviction}) fail that call
 * only.
 */
public final class RedisStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");
    private static final long FIRST_PROBE_DELAY_MILLIS = 25;
    private static final long MAX_PROBE_DELAY_MILLIS = 500;

    final RedisScript fixedWindow = RedisScript.load("fixed-window.lua");
    final RedisScript slidingWindow = RedisScript.load("sliding-window.lua");
    final RedisScript tokenBucket = RedisScript.load("token-bucket.lua");

    private final RedisConfig config;
    private final JedisPool pool;
    private final long timeoutNanos;
    private final AtomicBoolean down = new AtomicBoolean();
    private final LongAdder failedWhileDown = new LongAdder();
    private volatile boolean closed;
    private volatile StoreUnavailableException outage;

    public RedisStore(RedisConfig config) {
        this.config = config;
        int timeoutMillis = (int) Math.max(1, config.timeout().toMillis());
        this.timeoutNanos = config.timeout().toNanos();
        GenericObjectPoolConfig<Jedis> poolConfig = new GenericObjectPoolConfig<>();
        poolConfig.setMaxTotal(64);
        poolConfig.setMaxIdle(64);
        poolConfig.setMinIdle(0);
        poolConfig.setMaxWait(config.timeout());
        poolConfig.setBlockWhenExhausted(true);
        poolConfig.setJmxEnabled(false);
        this.pool = new JedisPool(poolConfig, URI.create(config.uri()), timeoutMillis, timeoutMillis);
    }

    /** The key prefix of this store's counters. */
    String keyPrefix() {
        return config.keyPrefix();
    }

    /**
     * Runs a script by its SHA, loading it on {@code NOSCRIPT}.
     *
     * @throws StoreUnavailableException when the server cannot answer within the timeout
     */
    @SuppressWarnings("unchecked")
    List<Long> eval(RedisScript script, List<String> keys, List<String> args) {
        StoreUnavailableException current = outage;
        if (current != null) {
            failedWhileDown.increment();
            throw current;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        try (Jedis jedis = pool.getResource()) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left < 1) {
                throw new StoreUnavailableException("no Redis connection free within the timeout", null);
            }
            jedis.getConnection().setSoTimeout((int) left);
            try {
                return (List<Long>) jedis.evalsha(script.sha, keys, args);
            } catch (JedisNoScriptException notLoaded) {
                jedis.scriptLoad(script.text);
                return (List<Long>) jedis.evalsha(script.sha, keys, args);
            }
        } catch (JedisConnectionException e) {
            throw markDown(e);
        } catch (JedisException e) {
            // the server answered with an error, or the pool had no connection in time
            throw new StoreUnavailableException("Redis: " + e.getMessage(), e);
        }
    }

    private StoreUnavailableException markDown(Exception cause) {
        StoreUnavailableException failure = new StoreUnavailableException(
                "Redis at " + config.maskedUri() + " is not answering: " + cause.getMessage(), cause);
        if (!closed && down.compareAndSet(false, true)) {
            outage = failure;
            LOG.log(Level.WARNING, "rate-limit-agent: Redis at " + config.maskedUri() + " is not answering ("
                    + cause.getMessage() + "); each rule follows its on-error until it is back");
            Thread probe = new Thread(this::probeUntilUp, "rate-limit-agent-redis-probe");
            probe.setDaemon(true);
            probe.start();
        }
        return failure;
    }

    /** Probes the server with backoff until it answers, then lets calls through again. */
    private void probeUntilUp() {
        long started = System.nanoTime();
        long delay = FIRST_PROBE_DELAY_MILLIS;
        while (!closed) {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                return;
            }
            try (Jedis jedis = pool.getResource()) {
                jedis.ping();
            } catch (JedisException e) {
                delay = Math.min(MAX_PROBE_DELAY_MILLIS, delay * 2);
                continue;
            }
            // connections opened before the outage may be dead: drop the idle ones
            pool.clear();
            outage = null;
            down.set(false);
            LOG.log(Level.WARNING, "rate-limit-agent: Redis at " + config.maskedUri() + " answers again after "
                    + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms; "
                    + failedWhileDown.sumThenReset() + " calls followed on-error meanwhile");
            return;
        }
    }

    /** Whether calls currently go to the server. */
    public boolean isUp() {
        return outage == null;
    }

    @Override
    public void close() {
        closed = true;
        pool.close();
    }
}
