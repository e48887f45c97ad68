package dev.ratelimit.store;

import dev.ratelimit.AgentThreads;
import dev.ratelimit.config.RedisConfig;
import dev.ratelimit.limit.StoreUnavailableException;
import java.lang.System.Logger.Level;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLParameters;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisFactory;
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
 * {@code redis.timeout}: borrowing a connection and the command share one deadline, and
 * connections are opened by the store's own threads only ({@link OpenedInBackground}).
 *
 * <p>When the server fails to answer (refused, reset, timed out), the store is marked down: every
 * call from then on fails at once, without touching the network, and each rule does what its
 * {@code on-error} says. One background thread probes the server with backoff (capped so that
 * recovery is noticed within a second) and marks the store up again, dropping the pooled
 * connections of the outage. The outage is logged once when it starts and once when it ends.
 * Errors the server reports (for example out of memory under {@code noeviction}) and a pool with
 * no free connection in time fail that call only; each kind is logged when first seen and then at
 * most once a minute, with the number of calls it failed.
 */
public final class RedisStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.ratelimit");
    /**
     * Writes the store's log lines, in the order they are handed to it, on a thread of its own:
     * written on the calling thread, the first line (the logger's own start-up) or a slow
     * appender held up the call that found the failure past its timeout (the Redis review of the
     * thirty-fourth round: 155 ms under a timeout of 100 ms). A call waits for its line until its
     * deadline ({@link #awaitWritten}), no longer: a logger that keeps up writes the line before
     * the call returns, as before. Handing a line over takes no lock a logger holds, so it may be
     * done under outageLog, which keeps an outage's lines in order.
     */
    private static final ThreadPoolExecutor LOG_WRITER = logWriter();

    private static ThreadPoolExecutor logWriter() {
        ThreadPoolExecutor writer = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                task -> AgentThreads.daemon("rate-limit-agent-redis-log", task));
        writer.allowCoreThreadTimeOut(true);
        // lines still queued when the JVM exits are written first, for at most a second: the
        // writer's thread is a daemon, and a process that exits after an outage began (a batch
        // job) lost its line (review of the thirty-fourth round's fixes)
        try {
            Runtime.getRuntime().addShutdownHook(AgentThreads.daemon("rate-limit-agent-redis-log-drain", () -> {
                writer.shutdown();
                try {
                    writer.awaitTermination(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    // exiting
                }
            }));
        } catch (IllegalStateException shuttingDown) {
            // the JVM is exiting already
        }
        return writer;
    }

    /** Logs {@code line} at {@code level} on the log writer's thread (on one of its own once the JVM is exiting). */
    private static Future<?> log(Level level, String line) {
        try {
            return LOG_WRITER.submit(() -> LOG.log(level, line));
        } catch (RejectedExecutionException exiting) {
            // the JVM is exiting: on a thread of its own, since the caller may hold outageLog,
            // and a logger's lock must never be taken under it
            AgentThreads.daemon("rate-limit-agent-redis-log", () -> LOG.log(level, line)).start();
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
    }

    /**
     * On a call's thread, waits for {@code written} until the call's deadline (the line written
     * before the call returns, unless the logger is slow); elsewhere (the probe, a reload), not at all.
     */
    private static void awaitWritten(Future<?> written) {
        long[] call = CALL_DEADLINE.get();
        long left = call[0] - System.nanoTime();
        // not on the writer's own thread (a limited call made by a log handler): its line is
        // queued behind the line being written, and would take the call's whole timeout
        if (call[0] == 0 || left <= 0 || Thread.currentThread().getName().equals("rate-limit-agent-redis-log")) {
            return;
        }
        try {
            written.get(left, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException slowOrFailed) {
            // written later, or the logger's own failure: not the call's
        } catch (InterruptedException e) {
            // the application's interrupt: set again when the call returns (eval), as any
            call[1] = 1;
        }
    }

    /** Waits until the lines handed to the log writer so far are written; for tests. */
    static void awaitLog() throws InterruptedException, ExecutionException {
        LOG_WRITER.submit(() -> { }).get();
    }
    private static final long FIRST_PROBE_DELAY_MILLIS = 25;
    private static final long MAX_PROBE_DELAY_MILLIS = 500;
    private static final int TIMEOUTS_BEFORE_DOWN = 3;
    private static final long FAILURE_LOG_INTERVAL_NANOS = 60_000_000_000L;
    private static final int MAX_CONNECTIONS = 64;

    final RedisScript fixedWindow = RedisScript.load("fixed-window.lua");
    final RedisScript slidingWindow = RedisScript.load("sliding-window.lua");
    final RedisScript tokenBucket = RedisScript.load("token-bucket.lua");

    private final RedisConfig config;
    /** Package-private for tests. */
    final JedisPool pool;
    /** The pool's factory: the connector opens connections with it before handing them to the pool. */
    private final OpenedInBackground poolConnections;
    private final int maxConnections;
    /** Opens the probe's connections: new ones, with the configured timeout (see {@link #answers}). */
    private final OpenedInBackground probeConnections;
    private final long timeoutNanos;
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicInteger timeoutsInARow = new AtomicInteger();
    /** The outage whose probe failure {@link #probeFailed} logged; guarded by {@code outageLog}. */
    private StoreUnavailableException probeCauseLogged;
    /**
     * When the earliest command of the timeouts counted in a row was sent ({@code System.nanoTime});
     * {@link #NEVER} when none is counted (see {@link #outageAfter}).
     */
    private final AtomicLong firstCountedSend = new AtomicLong(NEVER);
    /** When the latest command of the timeouts counted in a row was sent; {@link #NEVER} when none is. */
    private final AtomicLong lastCountedSend = new AtomicLong(NEVER);
    /**
     * When the latest answered command was sent ({@code System.nanoTime}): a timeout is a sign of
     * an outage only if no command sent after it has been answered (see {@link #outageSign}).
     */
    private final AtomicLong lastAnsweredSend = new AtomicLong(System.nanoTime() - TimeUnit.DAYS.toNanos(1));
    /**
     * When the latest connection opening that the server set up began: a sign against an outage
     * for the calls that waited for a connection only, not for commands (see {@link #openingOutageSign}).
     */
    private final AtomicLong lastOpenedStart = new AtomicLong(System.nanoTime() - TimeUnit.DAYS.toNanos(1));
    /** Connections the connector is opening, outside the pool (see {@link #openIdleConnection}). */
    private final AtomicInteger opening = new AtomicInteger();
    /**
     * The openings under way that signal their end ({@link #poolChanged}): not those at capacity,
     * which add nothing and end without a signal, though {@link #opening} counts them meanwhile.
     */
    private final AtomicInteger signalledOpenings = new AtomicInteger();
    private final LongAdder failedCalls = new LongAdder();
    private final Map<String, AtomicLong> lastLogged = new ConcurrentHashMap<>();
    private volatile boolean closed;
    /**
     * Guards the outage's log lines, so that each outage logged as begun is ended in the log once:
     * by the probe's recovery, or by a reload that replaces the store first (the two raced, and
     * each could take the other for the one to say it).
     */
    private final Object outageLog = new Object();
    /** Set when a reload replaced this store (see {@link #closeAfterCallsInFlight}); guarded by outageLog. */
    private boolean retired;
    /** Whether the outage under way was logged as begun and not yet as ended; guarded by outageLog. */
    private boolean outageLogged;
    /** When connections were last dropped for a replica's reply ({@code System.nanoTime}), or NEVER. */
    private volatile long demotedClearedAt = NEVER;
    /**
     * When the idle connections were last dropped for one found closed while idle
     * ({@code System.nanoTime}), or NEVER. A connection whose opening began before that, and that
     * was not in the pool then (the connector was opening it), may have been closed with the
     * others: it is asked for a PING on its next loan, as a connection idle a while is (see
     * {@link OpenedInBackground#validateObject}). It was lent unchecked, failed at once, and
     * under load its failure was taken for an outage (a CI run of the thirty-sixth round).
     */
    private volatile long idleClosedClearedAt = NEVER;
    private static final long NEVER = Long.MIN_VALUE;
    /** When the outage under way began ({@code System.nanoTime}); guarded by outageLog. */
    private long downSince;
    private volatile StoreUnavailableException outage;
    /**
     * Opens connections for application threads (see {@link OpenedInBackground}): a thread per
     * opening under way, as many as the pool holds at most, each ending when idle a while; more
     * openings wait their turn (at capacity, an opening adds nothing and ends at once, and its
     * call waits for a connection another call gives back, as any call does in a full pool).
     */
    /** Package-private for tests. */
    final ThreadPoolExecutor connector;

    /**
     * Runs the commands of calls made on virtual threads ({@link #commandElsewhere}): at most one
     * per borrowed connection, so as many threads as the pool holds, each ending when idle a while.
     * Package-private for tests.
     */
    final ThreadPoolExecutor commands;

    /**
     * Whether a call's command runs on {@link #commands}: on a virtual thread. Package-private for
     * tests, which run that path on any JDK.
     */
    java.util.function.BooleanSupplier commandsElsewhere = ON_VIRTUAL_THREAD;

    /** Set on the store's own threads: they may open connections. */
    private static final ThreadLocal<Boolean> MAY_CONNECT = new ThreadLocal<>();
    /**
     * How long a connection may sit in the pool before it is asked for a PING on its next loan
     * ({@link #stillOpen}): Redis's shortest idle timeout ({@code timeout 1}) closes a connection
     * its server has not heard from for more than a second, counted from the server's side (the
     * reply's way back earlier than the pool's), in whole seconds: a tenth of a second's margin.
     */
    static final Duration IDLE_BEFORE_CHECK = Duration.ofMillis(900);
    /** The least time the idle check's PING is given; with less, there is no check. */
    private static final long MIN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * The call under way on this thread ({@link #eval}): [0] its deadline, 0 outside one, for the
     * idle check of a connection it borrows and the wait for its log line; [1] not 0 when the
     * thread was interrupted while the idle check waited, to be set again when the call returns.
     */
    private static final ThreadLocal<long[]> CALL_DEADLINE = ThreadLocal.withInitial(() -> new long[2]);
    /** A connection the connector opened, for the pool's {@code makeObject} to take (see {@link #openIdleConnection}). */
    private static final ThreadLocal<PooledObject<Jedis>> HANDED_OVER = new ThreadLocal<>();

    public RedisStore(RedisConfig config) {
        this(config, MAX_CONNECTIONS);
    }

    /** A store whose pool holds at most {@code maxConnections}: package-private, for tests of a full pool. */
    RedisStore(RedisConfig config, int maxConnections) {
        this.maxConnections = maxConnections;
        this.config = config;
        int timeoutMillis = (int) Math.max(1, config.timeout().toMillis());
        this.timeoutNanos = config.timeout().toNanos();
        GenericObjectPoolConfig<Jedis> poolConfig = new GenericObjectPoolConfig<>();
        poolConfig.setMaxTotal(maxConnections);
        poolConfig.setMaxIdle(maxConnections);
        poolConfig.setMinIdle(0);
        poolConfig.setMaxWait(config.timeout());
        poolConfig.setBlockWhenExhausted(true);
        poolConfig.setJmxEnabled(false);
        // each borrowed connection goes through OpenedInBackground.validateObject, which looks at
        // the server only when the connection sat idle a while (IDLE_BEFORE_CHECK)
        poolConfig.setTestOnBorrow(true);
        // no evictor thread: evict() is called when an idle check fails, and drops the idle
        // connections that have waited as long as the one that failed (stillOpen)
        poolConfig.setMinEvictableIdleDuration(IDLE_BEFORE_CHECK);
        poolConfig.setNumTestsPerEvictionRun(-1);
        poolConfig.setTimeBetweenEvictionRuns(Duration.ofMillis(-1));
        try {
            this.poolConnections = new OpenedInBackground(config.connectionUri(), timeoutMillis, false,
                    this::stillOpen, this::openedBeforeTheLastClear);
            this.pool = new JedisPool(poolConfig, poolConnections);
            this.probeConnections = new OpenedInBackground(config.connectionUri(), timeoutMillis, true, jedis -> true,
                    (opened, checked) -> false);
        } catch (RuntimeException e) {
            // the rule file's check refuses what the client would; should it differ, the
            // client's message repeats the URI, password included, so it is not passed on
            throw new IllegalArgumentException("the Redis client refused store.redis.uri " + config.maskedUri() + " ("
                    + e.getClass().getSimpleName() + ")");
        }
        this.connector = new ThreadPoolExecutor(maxConnections, maxConnections, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), task -> storeThread("rate-limit-agent-redis-connector", task));
        connector.allowCoreThreadTimeOut(true);
        this.commands = new ThreadPoolExecutor(maxConnections, maxConnections, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), task -> AgentThreads.daemon("rate-limit-agent-redis-command", task));
        commands.allowCoreThreadTimeOut(true);
        storeThread("rate-limit-agent-redis-warm-up", this::warmUp).start();
    }

    /**
     * Opens connections on the store's own threads only. Opening one takes several round trips
     * (the connect, the TLS handshake, {@code AUTH}, {@code CLIENT SETINFO}, {@code SELECT}),
     * each with the whole timeout: on an application thread that was two to four times the
     * timeout, where the specification allows one. An application thread that finds no idle
     * connection has the connector open one and waits for it until its deadline
     * ({@link #borrow}).
     */
    private static final class OpenedInBackground extends JedisFactory {
        /** The probe's connections: it runs on a store thread, and tests may call it on theirs. */
        private final boolean onAnyThread;
        /** The idle check ({@link RedisStore#stillOpen}), for a connection that sat in the pool a while. */
        private final java.util.function.Predicate<Jedis> idleCheck;
        /** When each open connection was opened ({@code System.nanoTime}), for {@link #openedAt}. */
        private final Map<Jedis, Long> opened = Collections.synchronizedMap(new IdentityHashMap<>());
        /** Whether a connection must be checked though not idle a while: given when it was opened and last checked. */
        private final java.util.function.BiPredicate<Long, Long> suspect;
        /** When a connection last passed a check it was given as a suspect ({@code System.nanoTime}). */
        private final Map<Jedis, Long> checked = Collections.synchronizedMap(new IdentityHashMap<>());

        OpenedInBackground(URI uri, int timeoutMillis, boolean onAnyThread, java.util.function.Predicate<Jedis> idleCheck,
                java.util.function.BiPredicate<Long, Long> suspect) {
            super(uri, timeoutMillis, timeoutMillis, null, null, serverIdentityChecked(), null);
            this.onAnyThread = onAnyThread;
            this.idleCheck = idleCheck;
            this.suspect = suspect;
        }

        /** When {@code jedis} was opened, or {@code Long.MIN_VALUE} when it is not known (closed). */
        long openedAt(Jedis jedis) {
            Long at = opened.get(jedis);
            return at == null ? Long.MIN_VALUE : at;
        }

        /**
         * Whether a connection about to be lent may be used: one that sat in the pool for
         * {@link #IDLE_BEFORE_CHECK} or longer goes through the idle check first
         * ({@link RedisStore#stillOpen}); a connection that fails it is destroyed, and the pool lends
         * another or has one opened.
         */
        @Override
        public boolean validateObject(PooledObject<Jedis> pooled) {
            Jedis jedis = pooled.getObject();
            if (pooled.getIdleDuration().compareTo(IDLE_BEFORE_CHECK) >= 0) {
                return idleCheck.test(jedis);
            }
            Long checkedAt = checked.get(jedis);
            if (!suspect.test(openedAt(jedis), checkedAt == null ? Long.MIN_VALUE : checkedAt)) {
                return true;
            }
            long asked = System.nanoTime();
            boolean open = idleCheck.test(jedis);
            if (open) {
                // not asked again until the next such drop
                checked.put(jedis, asked);
            }
            return open;
        }

        @Override
        public PooledObject<Jedis> makeObject() throws Exception {
            if (!onAnyThread) {
                PooledObject<Jedis> opened = HANDED_OVER.get();
                if (opened != null) {
                    HANDED_OVER.remove();
                    return opened;
                }
                if (MAY_CONNECT.get() == null) {
                    throw NotOnThisThread.INSTANCE;
                }
            }
            // when the opening began: a connection whose opening began before a drop for a
            // replica's reply may still reach the old server (see eval)
            long began = System.nanoTime();
            PooledObject<Jedis> made = super.makeObject();
            opened.put(made.getObject(), began);
            return made;
        }

        @Override
        public void destroyObject(PooledObject<Jedis> pooled) throws Exception {
            opened.remove(pooled.getObject());
            checked.remove(pooled.getObject());
            super.destroyObject(pooled);
        }
    }

    /** What the pool throws on an application thread that would have opened a connection. */
    private static final class NotOnThisThread extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final NotOnThisThread INSTANCE = new NotOnThisThread();

        private NotOnThisThread() {
            super("connections are opened in the background", null, false, false);
        }
    }

    /**
     * A thread of the store's own: it may open connections. A connector thread is created by the
     * application thread whose call needed it, and lives on, so it takes nothing of that thread's
     * ({@link AgentThreads#daemon}).
     */
    private static Thread storeThread(String name, Runnable body) {
        return AgentThreads.daemon(name, () -> {
            MAY_CONNECT.set(Boolean.TRUE);
            body.run();
        });
    }

    /**
     * A connection from the pool within the call's deadline: an idle one, else one the connector
     * opens for this call (several calls, several openings at once, as when each call opened its
     * own), else one returned by another call while the pool is full.
     *
     * @throws JedisConnectionException when the connector could not open one (the server is
     *     down, or refuses the password)
     * @throws StoreUnavailableException when none was free or opened in time (counted, as
     *     {@link #failed})
     */
    // package-private for tests: calls go through the two-argument form, from eval
    Jedis borrow(long deadline) {
        boolean[] interrupted = new boolean[1];
        try {
            return borrow(deadline, interrupted);
        } finally {
            if (interrupted[0]) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * {@link #borrow(long)}, telling the caller in {@code interrupted[0]} whether the thread was
     * interrupted while it waited, rather than interrupting it again: the application's interrupt
     * is not meant for the agent, the wait is bounded by the deadline anyway, and the caller sets
     * the flag again once the call is over (set before the command, it closed the socket of a
     * virtual thread, and the store was marked down).
     */
    Jedis borrow(long deadline, boolean[] interrupted) {
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw failed("pool", new JedisException("no Redis connection free or opened within the timeout"));
            }
            // read before the pool is asked: a change after it (an opening ended, a connection
            // given back) then ends the wait below at once, rather than after a slice
            long seen = poolChanges.get();
            try {
                // not JedisPool.getResource: it would wait the whole timeout when the pool is full
                return pool.borrowObject(Duration.ofNanos(left));
            } catch (NoSuchElementException e) {
                throw failed("pool", new JedisException("no Redis connection free within the timeout"));
            } catch (JedisException e) {
                throw e;
            } catch (InterruptedException e) {
                interrupted[0] = true;
                continue;
            } catch (Exception e) {
                if (!(e instanceof NotOnThisThread)) {
                    throw new JedisException("borrowing a Redis connection failed", e);
                }
            }
            Future<?> opened;
            long asked = System.nanoTime();
            try {
                opened = connector.submit(this::openIdleConnection);
            } catch (RejectedExecutionException e) {
                throw failed("pool", new JedisException("the store is closed"));
            }
            while (true) {
                try {
                    opened.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted[0] = true;
                } catch (TimeoutException e) {
                    // the server did not finish a connection's set-up in time: a timeout of this
                    // call, three in a row an outage, as when the call waited for the server itself;
                    // unless the call asked with little of its time left (see eval)
                    if (!openingOutageSign(asked, left)) {
                        throw failed("pool", new JedisException("no Redis connection opened within the time left"));
                    }
                    throw new JedisConnectionException(NO_CONNECTION_OPENED,
                            new SocketTimeoutException("opening a connection"));
                } catch (ExecutionException e) {
                    // Whatever stopped the connector (refused, a wrong password, the server's
                    // client limit) is an outage: calls fail fast and the probe tries again with
                    // backoff, rather than each call having another connection opened
                    Throwable cause = e.getCause();
                    if (cause instanceof JedisConnectionException) {
                        throw (JedisConnectionException) cause;
                    }
                    throw new JedisConnectionException("could not open a connection: " + cause.getMessage(), cause);
                }
            }
            // Nothing changed since this call asked (its opening added nothing: the pool was at
            // capacity counting the openings under way): wait for an opening to end or a
            // connection to be given back before asking the pool again. Asking at once spun: the
            // pool, not full, called makeObject again, another opening was submitted and found
            // the same capacity, and so on until the openings under way ended, every waiting
            // call of a burst burning a core and flooding the connector with tasks
            awaitPoolChange(seen, deadline, interrupted);
        }
    }

    /** The longest a call waits for a change of the pool before it looks at the pool again. */
    private static final long POOL_CHANGE_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** Counts what may let a waiting call have a connection: an opening ended, a connection given back. */
    private final AtomicLong poolChanges = new AtomicLong();
    private final AtomicInteger awaitingChange = new AtomicInteger();
    private final ReentrantLock changeLock = new ReentrantLock();
    private final Condition changeSignal = changeLock.newCondition();

    /**
     * The idle check of a connection that sat in the pool for {@link #IDLE_BEFORE_CHECK} or longer,
     * before a call uses it: a PING. A server's idle timeout (Redis's {@code timeout}, a load
     * balancer's) closes such connections; with traffic sparser than that timeout, every call found
     * its connection closed, failed, and left a new one to be closed before the next (the Redis
     * review of the thirty-fourth round). A PING is safe to send where the call's script is not
     * sent twice.
     *
     * <p>The PING has half the call's time left: a connection a NAT or a firewall dropped without
     * a word answers nothing, and the other half is left for a new one. With no time left there is
     * no check (the call fails on its own deadline; its connection is not destroyed for that). One
     * that fails takes the pool's other idle connections with it: the pool lends the one given back
     * last first, so they have all waited at least as long, and behind a dropping NAT each cost a
     * call its whole timeout. (A server that stalls past that half loses them too: they are opened
     * again as calls need them.) On a virtual thread the PING runs on a thread of the store's, as
     * the command does ({@link #commandElsewhere}): an interrupt would close the socket.
     */
    /**
     * Whether a connection opened at {@code openedAt} and last checked as a suspect at
     * {@code checkedAt} ({@code Long.MIN_VALUE}: not known, never) began opening before the last
     * drop for a connection closed while idle, and has not been checked since (see
     * {@link #idleClosedClearedAt}).
     */
    private boolean openedBeforeTheLastClear(long openedAt, long checkedAt) {
        long cleared = idleClosedClearedAt;
        return cleared != NEVER && openedAt != Long.MIN_VALUE && openedAt - cleared < 0
                && (checkedAt == Long.MIN_VALUE || checkedAt - cleared < 0);
    }

    private boolean stillOpen(Jedis jedis) {
        long[] call = CALL_DEADLINE.get();
        long budgetNanos = timeoutNanos;
        if (call[0] != 0) {
            budgetNanos = (call[0] - System.nanoTime()) / 2;
        }
        if (budgetNanos < MIN_CHECK_NANOS) {
            // too little time for a PING a healthy server answers: the call's command decides
            return true;
        }
        int millis = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(budgetNanos));
        boolean answered = commandsElsewhere.getAsBoolean() ? pingElsewhere(jedis, millis, call) : ping(jedis, millis);
        if (!answered) {
            // the idle connections as old as this one, not those given back meanwhile
            try {
                pool.evict();
            } catch (Exception e) {
                pool.clear();
            }
            poolChanged();
        }
        return answered;
    }

    private static boolean ping(Jedis jedis, int millis) {
        try {
            jedis.getConnection().setSoTimeout(millis);
            return "PONG".equals(jedis.ping());
        } catch (RuntimeException closedOrSilent) {
            return false;
        }
    }

    /**
     * {@link #ping} on a thread of the store's, waited for as long as the PING may take. A PING
     * still queued when that time is up (every command thread busy) is no sign of the connection's:
     * it is taken for open, and the call's command decides, as with too little time for a check.
     * Taken for closed, it cost the pool its idle connections whenever the command threads were
     * behind (the review of the thirty-fourth round's fixes).
     */
    private boolean pingElsewhere(Jedis jedis, int millis, long[] call) {
        Future<Boolean> running;
        AtomicBoolean began = new AtomicBoolean();
        try {
            running = commands.submit(() -> began.compareAndSet(false, true) && ping(jedis, millis));
        } catch (RejectedExecutionException closedStore) {
            return false;
        }
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            try {
                return running.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                // the application's interrupt: set again when the call returns (eval)
                call[1] = 1;
            } catch (TimeoutException e) {
                // never begun: claimed here, so it never will be (the connection goes to the
                // call's command, not to two threads), and no sign either way. Begun and
                // unanswered: destroyed by the pool, which closes it under the PING
                boolean neverBegun = began.compareAndSet(false, true);
                running.cancel(true);
                return neverBegun;
            } catch (ExecutionException e) {
                return false;
            }
        }
    }

    private void poolChanged() {
        poolChanges.incrementAndGet();
        if (awaitingChange.get() > 0) {
            changeLock.lock();
            try {
                changeSignal.signalAll();
            } finally {
                changeLock.unlock();
            }
        }
    }

    /** Waits until {@link #poolChanges} is past {@code seen}, or the deadline. */
    private void awaitPoolChange(long seen, long deadline, boolean[] interrupted) {
        // at most a slice at a time: a change this store does not see (a connection given back
        // by the pool's own code) then costs the call a slice, not its whole timeout. Not while an
        // opening is under way: its end is a change this store sees (it ends the wait however
        // soon after this look it comes, the count read before the pool was asked), and a call
        // that looked again each slice asked the connector for another opening, which found the
        // pool at capacity, once per slice of a slow opening (4 asks in a CI run). Only an opening
        // that signals its end: one at capacity ends without a signal, and a call that took it for
        // one waited its whole timeout though the pool had room
        long until = signalledOpenings.get() > 0 ? deadline : Math.min(deadline, System.nanoTime() + POOL_CHANGE_SLICE_NANOS);
        awaitingChange.incrementAndGet();
        changeLock.lock();
        try {
            while (poolChanges.get() == seen) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    changeSignal.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted[0] = true;
                }
            }
        } finally {
            changeLock.unlock();
            awaitingChange.decrementAndGet();
        }
    }

    /**
     * Opens a connection and leaves it idle in the pool (on a store thread); package-private for
     * tests.
     *
     * <p>The connection is opened first, outside the pool, then handed to it (its
     * {@code makeObject} takes it at once). Opened inside {@code addObject}, it counted as an
     * opening in progress, and a call that found the pool full (commons-pool2's
     * {@code create}) waited for that opening to end, whatever its own deadline: 449 ms with a
     * timeout of 200 ms, in a review's run against a server slow to set a connection up.
     */
    Void openIdleConnection() throws Exception {
        int openings = opening.incrementAndGet();
        boolean opens = false;
        try {
            if (pool.getNumActive() + pool.getNumIdle() + openings > maxConnections) {
                // at capacity, counting the openings under way: the call waits for one of them
                // to end, or for a connection another call gives back (awaitPoolChange)
                return null;
            }
            opens = true;
            signalledOpenings.incrementAndGet();
            long started = System.nanoTime();
            PooledObject<Jedis> opened = poolConnections.makeObject();
            // the server answered its set-up: a sign against an outage for the calls that asked
            // for a connection before this opening began (openingOutageSign), not for commands
            opened(started);
            HANDED_OVER.set(opened);
            try {
                pool.addObject();
            } finally {
                PooledObject<Jedis> unused = HANDED_OVER.get();
                HANDED_OVER.remove();
                if (unused != null) {
                    // the pool filled up while it was opened (addObject added nothing)
                    poolConnections.destroyObject(unused);
                }
            }
        } finally {
            opening.decrementAndGet();
            if (opens) {
                // added, or failed: either way the calls waiting on it may ask the pool again
                // (uncounted first: a call that sees it counted is woken by the change after)
                signalledOpenings.decrementAndGet();
                poolChanged();
            }
        }
        if (closed) {
            // close() ran while it was being opened: the closed pool keeps what is added to it
            pool.clear();
        }
        return null;
    }

    /** Gives a borrowed connection back, as {@code Jedis.close} does for one from {@code getResource}. */
    void release(Jedis jedis) {
        if (!jedis.isBroken()) {
            pool.returnResource(jedis);
            poolChanged();
            return;
        }
        try {
            pool.returnBrokenResource(jedis);
        } catch (JedisException e) {
            // The connection is destroyed first; then, for calls waiting on a full pool, the pool
            // opens a replacement on this thread, which may not connect (NotOnThisThread). That
            // failure is not this call's: thrown from here it replaced the call's own outcome
            // (its rule's on-error) with an error of the agent's.
        }
        // the replacement, opened in the background for the calls waiting on a full pool
        try {
            connector.submit(this::openIdleConnection);
        } catch (RejectedExecutionException closed) {
            // the store is closed
        }
    }

    /**
     * TLS parameters that make the handshake check that the server's certificate names the host
     * of the URI, as HTTPS does. Without them the client checks only that a trusted CA signed
     * the certificate: any certificate of any host would do, and the password would go to whoever
     * presents one. Used for {@code rediss://} only.
     */
    private static SSLParameters serverIdentityChecked() {
        SSLParameters parameters = new SSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        return parameters;
    }

    /** Opens a connection and loads the scripts before the first call needs them. */
    private void warmUp() {
        try (Jedis jedis = pool.getResource()) {
            try {
                for (RedisScript script : List.of(fixedWindow, slidingWindow, tokenBucket)) {
                    jedis.scriptLoad(script.text);
                }
            } catch (redis.clients.jedis.exceptions.JedisDataException refused) {
                // the server (or a proxy that routes by key: SCRIPT LOAD names none) refused the
                // load: calls send the script itself when the server does not know it (command).
                // Only the load's refusal: a wrong password refused the connection above, and is
                // a warning as before (review of the thirty-fourth round's last fixes)
                log(Level.DEBUG, "rate-limit-agent: Redis at " + config.maskedUri() + " did not load the scripts at"
                        + " warm-up (" + refused.getMessage() + "); calls send them when it asks");
            }
        } catch (JedisConnectionException e) {
            markDown(e);
        } catch (JedisException e) {
            logFailure("warm-up", e, false);
        } finally {
            // its connection is back in the pool (or gone): a call may be waiting for it (a
            // pool of one: the call waited its whole timeout for a signal that never came)
            poolChanged();
        }
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
    List<Long> eval(RedisScript script, List<String> keys, List<String> args) {
        StoreUnavailableException current = outage;
        if (current != null) {
            failedCalls.increment();
            throw current;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        long[] call = CALL_DEADLINE.get();
        // a call made inside this one on the same thread (a log handler's) restores its caller's
        long outerDeadline = call[0];
        long outerInterrupted = call[1];
        call[0] = deadline;
        call[1] = 0;
        boolean borrowed = false;
        Jedis jedis = null;
        // The application's interrupt is not meant for the agent: cleared for the call, set again
        // when it returns. On a virtual thread (Java 21 and later) an interrupted thread's socket
        // I/O closes the socket: the call failed, and was taken for a connection closed while idle.
        // An interrupt during the command is kept from the socket too (commandElsewhere).
        boolean[] interrupted = {Thread.interrupted()};
        // when the command was sent, and the time the server had to answer it (see outageSign)
        long sent = deadline - timeoutNanos;
        long budget = timeoutNanos;
        try {
            // sets interrupted[0] should the thread be interrupted while it waits
            jedis = borrow(deadline, interrupted);
            borrowed = true;
            sent = System.nanoTime();
            budget = deadline - sent;
            if (budget <= 0) {
                throw failed("pool", new JedisException("no Redis connection free within the timeout"));
            }
            List<Long> reply = commandsElsewhere.getAsBoolean()
                    ? commandElsewhere(jedis, script, keys, args, deadline, interrupted)
                    : command(jedis, script, keys, args, deadline);
            resetTimeouts();
            if (demotedClearedAt != NEVER) {
                // a primary answers again: a later failover drops the connections once more
                demotedClearedAt = NEVER;
            }
            answered(sent);
            return reply;
        } catch (JedisConnectionException e) {
            if (Thread.currentThread().isInterrupted() && closedByInterrupt(e)) {
                // interrupted during the command (a virtual thread's socket closes then): this
                // call fails, not the store. A timeout of a thread that happens to be
                // interrupted is a timeout still, and counts towards an outage
                interrupted[0] = true;
                throw failed("interrupted", e);
            }
            boolean timeout = e.getCause() instanceof SocketTimeoutException;
            if (!timeout && borrowed && deadline - System.nanoTime() >= timeoutNanos * 9 / 10) {
                // A pooled connection found closed at once (end of stream, reset): most likely the
                // server's idle timeout, or a NAT's, closed it while it waited in the pool, and its
                // idle siblings with it. Not an outage: this one call fails (its rule's on-error
                // decides it: it is not tried again, since the server may have run it), the idle
                // connections are dropped, and the next call opens a new one. Redis really down
                // shows at that next call, which cannot connect.
                idleClosedClearedAt = System.nanoTime();
                pool.clear();
                poolChanged();
                throw failed("connection closed while idle", e);
            }
            if (!timeout) {
                failedCalls.increment();
                throw markDown(e);
            }
            if (NOT_SENT.equals(e.getMessage()) || !outageSign(sent, budget)) {
                throw failed("timeout under load", e);
            }
            if (outageAfter(sent)) {
                failedCalls.increment();
                throw markDown(e);
            }
            throw failed("timeout", e);
        } catch (JedisException e) {
            String message = e.getMessage();
            if (jedis != null && onADemotedServer(message)) {
                // The server this connection reaches is a replica now: a failover behind one
                // address (DNS, a virtual IP, FAILOVER) left the pool's connections on the old
                // primary, and every call failed until a restart. This connection is destroyed,
                // the idle ones dropped, and the next call connects through the address again.
                jedis.getConnection().setBroken();
                long openedAt = poolConnections.openedAt(jedis);
                long clearedAt = demotedClearedAt;
                if (clearedAt != NEVER && openedAt != Long.MIN_VALUE && openedAt - clearedAt > 0) {
                    // opened through the address after the last such drop, and on a replica
                    // still: the address leads to one (a replica's URI, a failover DNS has not
                    // caught up with). An outage, probed with backoff: dropping the connections
                    // again opened one per call (the Redis review of the thirty-fourth round)
                    failedCalls.increment();
                    throw markDown(e);
                }
                demotedClearedAt = System.nanoTime();
                pool.clear();
                poolChanged();
                throw failed("the server is a replica", e);
            }
            // the server answered with an error, or the pool had no connection in time
            throw failed(message != null && message.startsWith("OOM") ? "out of memory" : "error", e);
        } finally {
            if (call[1] != 0) {
                // interrupted while the idle check of its connection or its log line waited
                interrupted[0] = true;
            }
            call[0] = outerDeadline;
            call[1] = outerInterrupted;
            if (jedis != null) {
                release(jedis);
            }
            if (interrupted[0]) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The script on a borrowed connection, by its SHA, loading it on {@code NOSCRIPT}, within the deadline. */
    @SuppressWarnings("unchecked")
    private static List<Long> command(Jedis jedis, RedisScript script, List<String> keys, List<String> args,
            long deadline) {
        jedis.getConnection().setSoTimeout(millisLeft(deadline));
        try {
            return (List<Long>) jedis.evalsha(script.sha, keys, args);
        } catch (JedisNoScriptException notLoaded) {
            // one more round trip (a restarted or flushed server), within the same deadline: the
            // script itself, which the server keeps for the EVALSHAs to come. Not SCRIPT LOAD
            // and EVALSHA again: SCRIPT LOAD names no key, and a proxy that routes by key (Envoy's)
            // refuses it or sends it to a server other than the key's, and every call failed
            jedis.getConnection().setSoTimeout(millisLeft(deadline));
            return (List<Long>) jedis.eval(script.text, keys, args);
        }
    }

    /**
     * {@link #command} for a virtual thread: run on a thread of the store's, which the application
     * cannot interrupt. An interrupt of a virtual thread blocked in socket I/O closes the socket
     * (Java 21 and later): the call failed (its rule's on-error decided it), and the connection was
     * lost, a new one opened for each interrupt. Code that cancels the losers of a fan-out
     * ({@code invokeAny}, a structured task scope) interrupted hundreds of calls a second, and the
     * openings that followed timed out until the store was marked down, Redis answering all along.
     * The calling thread waits for the command, its interrupts set aside as while it waits for a
     * connection ({@code interrupted[0]}), until the call's deadline.
     */
    private List<Long> commandElsewhere(Jedis jedis, RedisScript script, List<String> keys, List<String> args,
            long deadline, boolean[] interrupted) {
        Future<List<Long>> running;
        AtomicBoolean began = new AtomicBoolean();
        try {
            running = commands.submit(() -> {
                began.set(true);
                return command(jedis, script, keys, args, deadline);
            });
        } catch (RejectedExecutionException e) {
            throw failed("pool", new JedisException("the store is closed"));
        }
        while (true) {
            try {
                // bounded by the deadline, not only by the command's socket timeouts: a task the
                // pool's shutdown drained (close() during a reload) would never end; and the
                // calling thread never waits longer than the timeout
                return running.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                running.cancel(true);
                // the command thread may still be using it: destroyed when given back, not reused
                jedis.getConnection().setBroken();
                if (!began.get()) {
                    // still queued: never sent, no sign of the server's
                    throw new JedisConnectionException(NOT_SENT, new SocketTimeoutException("no time left"));
                }
                throw new JedisConnectionException(new SocketTimeoutException("no answer from Redis within the timeout"));
            } catch (InterruptedException e) {
                interrupted[0] = true;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException) {
                    throw (RuntimeException) cause;
                }
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw new JedisException("the Redis command failed", cause);
            }
        }
    }

    /** Whether the calling thread is a virtual one ({@code Thread.isVirtual}, Java 21 and later). */
    private static final java.util.function.BooleanSupplier ON_VIRTUAL_THREAD = onVirtualThread();

    private static java.util.function.BooleanSupplier onVirtualThread() {
        java.lang.invoke.MethodHandle isVirtual;
        try {
            isVirtual = java.lang.invoke.MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    java.lang.invoke.MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return () -> false; // before Java 21: no virtual threads
        }
        return () -> {
            try {
                return (boolean) isVirtual.invokeExact(Thread.currentThread());
            } catch (Throwable t) {
                return false;
            }
        };
    }

    /** Whether {@code e} comes of its thread's interrupt closing the connection's socket. */
    static boolean closedByInterrupt(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.nio.channels.ClosedByInterruptException
                    || cause instanceof java.net.SocketException && "Closed by interrupt".equals(cause.getMessage())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a server's error says it is no longer the primary: {@code READONLY} or
     * {@code MASTERDOWN}, as Redis 7 gives them from a script, or inside the script error that
     * Redis 5 and 6 give ({@code ERR Error running script ...: -READONLY You can't write ...}).
     */
    static boolean onADemotedServer(String message) {
        return message != null && (message.startsWith("READONLY ") || message.startsWith("MASTERDOWN ")
                || message.contains("-READONLY ") || message.contains("-MASTERDOWN "));
    }

    /**
     * Milliseconds to the deadline, rounded up (a socket timeout is in whole milliseconds, and 0
     * would be none: rounded down, a {@code timeout: 1ms} left every call 0 and failed it); no
     * time left is a timeout of this call.
     */
    private static int millisLeft(long deadline) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new JedisConnectionException(NOT_SENT, new SocketTimeoutException("no time left"));
        }
        return (int) Math.min(Integer.MAX_VALUE, (left + 999_999L) / 1_000_000L);
    }

    /**
     * Counts a timeout that is a sign of an outage ({@link #outageSign}) of a command sent at
     * {@code sentAt}; whether the server is now taken for down: three such timeouts in a row, of
     * commands sent at least a timeout apart, the earliest to the latest (in whatever order they
     * are counted). Three alone, all of one
     * burst, marked a healthy server down: a local Redis starved of CPU by the burst's own threads
     * (a hundred threads on two cores) answered nothing for 60 to 90 ms, a 50 ms timeout's calls
     * all timed out together, and with on-error: allow, up to 85 calls passed a limit of 5 while
     * the probe found it up 47 ms later (the Redis review of the thirty-seventh round). A hung
     * server is still silent a timeout later, so it is marked down a timeout later than before at
     * most: by the first call sent a timeout after the first that timed out. Package-private for
     * tests.
     */
    boolean outageAfter(long sentAt) {
        if (lastAnsweredSend.get() - sentAt >= 0) {
            // a command sent after it was answered meanwhile (and the count started again): no sign
            return false;
        }
        keepEarliest(firstCountedSend, sentAt);
        keepLatestCounted(sentAt);
        int timeouts = timeoutsInARow.incrementAndGet();
        long first = firstCountedSend.get();
        long last = lastCountedSend.get();
        return timeouts >= TIMEOUTS_BEFORE_DOWN && first != NEVER && last != NEVER && last - first >= timeoutNanos;
    }

    /** Sets {@link #lastCountedSend} to {@code time} unless it holds a later one. */
    private void keepLatestCounted(long time) {
        lastCountedSend.accumulateAndGet(time, (held, next) -> held == NEVER || next - held > 0 ? next : held);
    }

    /** An answer: the timeouts in a row start again. Package-private for tests. */
    void resetTimeouts() {
        timeoutsInARow.set(0);
        firstCountedSend.set(NEVER);
        lastCountedSend.set(NEVER);
    }

    /** Sets {@code earliest} to {@code time} unless it holds an earlier {@code System.nanoTime} ({@link #NEVER}: none). */
    private static void keepEarliest(AtomicLong earliest, long time) {
        earliest.accumulateAndGet(time, (held, next) -> held == NEVER || next - held < 0 ? next : held);
    }

    /** What a call that timed out waiting for the connector's opening fails with. */
    private static final String NO_CONNECTION_OPENED = "no Redis connection opened within the timeout";

    /** A timeout of a command that was never sent: a call that waited (for a connection, for a thread) until no time was left. */
    private static final String NOT_SENT = "the timeout passed before the call was sent";

    /**
     * Whether a timeout of a call that sent its command (or asked for a connection) at
     * {@code sentAt} with {@code budget} nanoseconds left is a sign that the server is not
     * answering, and so counts towards an outage (three in a row). Not when the server had less
     * than half the timeout: under a burst (a thousand calls at once, a pool of 64) a call that
     * waited long for a connection sent its command with a millisecond left. Not when a command
     * sent after it has been answered: the server answers, and this call lost a race with the
     * load (64 calls in flight time out together after one stall). Under a burst such timeouts,
     * three in a row, marked a healthy store down, and every call then followed on-error until
     * the probe found it up (on-error: allow let whole bursts through; the virtual-thread and
     * Redis-load reviews, 1000 calls at once with a 50 ms timeout). A hung or dead server
     * answers nothing, so its first timeouts count as before.
     */
    boolean outageSign(long sentAt, long budget) {
        return budget >= timeoutNanos / 2 && lastAnsweredSend.get() - sentAt < 0;
    }

    /**
     * {@link #outageSign} for a call that timed out waiting for a connection it asked for at
     * {@code askedAt}: a command answered, or a connection set up, since it asked is a sign
     * against an outage. Only this kind of timeout: a server that sets connections up but
     * answers no command ({@code CLIENT PAUSE WRITE}; a proxy that answers {@code AUTH} itself in
     * front of a hung server) replaced each timed-out call's connection, and that opening
     * discounted the timeouts of every command sent before it began, so that two callers half
     * a timeout apart kept it from being marked down for five timeouts and more.
     */
    boolean openingOutageSign(long askedAt, long budget) {
        return outageSign(askedAt, budget) && lastOpenedStart.get() - askedAt < 0;
    }

    /** Records that a connection opening begun at {@code startedAt} was set up by the server. */
    void opened(long startedAt) {
        keepLatest(lastOpenedStart, startedAt);
    }

    /** Records that a command sent at {@code sentAt} was answered. */
    void answered(long sentAt) {
        keepLatest(lastAnsweredSend, sentAt);
    }

    /** Sets {@code latest} to {@code time} unless it holds a later {@code System.nanoTime}. */
    private static void keepLatest(AtomicLong latest, long time) {
        latest.accumulateAndGet(time, (held, next) -> next - held > 0 ? next : held);
    }

    /** A failure of one call that is not an outage: counted, and logged at most once a minute per kind. */
    private StoreUnavailableException failed(String kind, JedisException e) {
        failedCalls.increment();
        logFailure(kind, e, true);
        return new StoreUnavailableException("Redis: " + e.getMessage(), e);
    }

    private static String followedOnError(long calls) {
        return (calls == 1 ? "1 call" : calls + " calls") + " followed on-error meanwhile";
    }

    private static String callsFailed(long calls) {
        return calls == 1 ? "1 call failed so far" : calls + " calls failed so far";
    }

    /** Logs a failure of {@code kind} (of a call's, or not), at most once a minute per kind. */
    private void logFailure(String kind, JedisException e, boolean ofACall) {
        AtomicLong last = lastLogged.computeIfAbsent(kind, k -> new AtomicLong(System.nanoTime() - FAILURE_LOG_INTERVAL_NANOS));
        long seen = last.get();
        long now = System.nanoTime();
        if (now - seen >= FAILURE_LOG_INTERVAL_NANOS && last.compareAndSet(seen, now)) {
            awaitWritten(log(Level.WARNING, "rate-limit-agent: Redis at " + config.maskedUri() + " failed a call (" + kind
                    + ": " + e.getMessage() + "); " + (ofACall ? "the rule's on-error decided it. "
                            + callsFailed(failedCalls.sum()) : "no call was affected")
                    + "; this is logged at most once a minute"));
        }
    }

    private StoreUnavailableException markDown(Exception cause) {
        StoreUnavailableException failure = new StoreUnavailableException(
                "Redis at " + config.maskedUri() + " is not answering: " + cause.getMessage(), cause);
        if (!closed && down.compareAndSet(false, true)) {
            long started;
            Future<?> written;
            synchronized (outageLog) {
                started = System.nanoTime();
                downSince = started;
                outage = failure;
                // a store a reload replaced serves only the calls in flight for a while: its
                // outage is the new store's to report, which sees it too (logged here, it had no
                // end: the recovery of a replaced store is not logged)
                outageLogged = !retired;
                // handed to the writer under the lock, so that no end line comes before it
                written = log(outageLogged ? Level.WARNING : Level.DEBUG, "rate-limit-agent: Redis at "
                        + config.maskedUri() + " is not answering (" + cause.getMessage()
                        + "); each rule follows its on-error until it is back");
            }
            awaitWritten(written);
            storeThread("rate-limit-agent-redis-probe", () -> probeUntilUp(started)).start();
        }
        return failure;
    }

    /** Probes the server with backoff until it answers, then lets calls through again. */
    private void probeUntilUp(long started) {
        long delay = FIRST_PROBE_DELAY_MILLIS;
        while (!closed) {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                return;
            }
            if (!answers()) {
                delay = Math.min(MAX_PROBE_DELAY_MILLIS, delay * 2);
                continue;
            }
            // connections opened before the outage may be dead: drop the idle ones, and open
            // one for the calls to come
            pool.clear();
            poolChanged();
            try {
                openIdleConnection();
            } catch (Exception e) {
                // the next call asks the connector for one
            }
            resetTimeouts();
            synchronized (outageLog) {
                outage = null;
                down.set(false);
                if (outageLogged) {
                    // not when a reload that replaced the store ended the outage in the log first
                    outageLogged = false;
                    log(Level.WARNING, "rate-limit-agent: Redis at " + config.maskedUri() + " answers again after "
                            + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms; "
                            + followedOnError(failedCalls.sumThenReset()));
                }
            }
            return;
        }
    }

    /**
     * One probe: whether the server runs a call's script within the timeout, on a connection of
     * its own. Not a pooled one: a call sets its connection's socket timeout to the time it has
     * left, as little as a millisecond, and leaves it so; a probe on such a connection failed
     * against a server that answered, and the outage lasted another backoff.
     */
    boolean answers() {
        PooledObject<Jedis> connection;
        try {
            connection = probeConnections.makeObject();
        } catch (Exception e) {
            probeFailed(e);
            return false;
        }
        try {
            // what a call does, not a PING: a server paused for writes (CLIENT PAUSE WRITE) or a
            // proxy in front of a hung one answers PING, and the store came back 25 ms after it
            // was marked down, each call then waiting its whole timeout again (the second review
            // of the Redis fixes). The fixed-window script on a key of the store's own, which no
            // rule's key can be ({rule|key} always holds a "|"), in a window of a second
            command(connection.getObject(), fixedWindow,
                    List.of(config.keyPrefix() + "{rate-limit-agent-probe}:fixed-window:1s"),
                    List.of("1000", Long.toString(Long.MAX_VALUE)), System.nanoTime() + timeoutNanos);
            return true;
        } catch (JedisException e) {
            // the connection opened: the script's own failure (OOM, NOPERM) is not an opening's
            return false;
        } finally {
            try {
                probeConnections.destroyObject(connection);
            } catch (Exception e) {
                // closing it
            }
        }
    }

    /**
     * Logs, once per outage, why the probe could not open a connection, for an outage whose own
     * line says only that the calls timed out waiting for one: the connector may be failing on the
     * certificate (a host name the certificate does not name, a CA the JVM does not trust), a
     * password or a database. With a few threads calling, every call timed out so, the TLS
     * handshake's failure was never logged, and an operator chased latency (the Redis review of
     * the thirty-seventh round). Not for any other outage, whose line names its cause (a server
     * stopped: refused, reset), and not for a probe that times out too, which says nothing new.
     */
    private void probeFailed(Exception e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root instanceof SocketTimeoutException) {
            return;
        }
        String why = root.getClass().getName() + ": " + root.getMessage();
        synchronized (outageLog) {
            StoreUnavailableException current = outage;
            if (current == null || probeCauseLogged == current || !outageLogged
                    || current.getMessage() == null || !current.getMessage().contains(NO_CONNECTION_OPENED)) {
                return;
            }
            probeCauseLogged = current;
            log(Level.WARNING, "rate-limit-agent: Redis at " + config.maskedUri() + " is still not answering: opening a"
                    + " connection failed (" + why + "); probing again with backoff");
        }
    }

    /** Whether calls currently go to the server. */
    public boolean isUp() {
        return outage == null;
    }

    /**
     * Closes the store once the calls that may still be using it have ended: a reload that
     * swaps the store (a new timeout, server or key prefix) rebinds the rules at once, but a call
     * that took the old rule just before goes on with this store, and found its pool closed (the
     * soak: 58 failed calls in 400,000 while the timeout was edited every 2 s, each deciding by
     * its rule's on-error). Each rule's decision waits at most its timeout, but one request may
     * decide several rules one after another, after reading its keys: the store stays open for
     * ten timeouts, at least 1 s and at most 60 s (a call in flight longer than that, several
     * slow rules under a long timeout, may still find it closed and follow its on-error).
     */
    public void closeAfterCallsInFlight() {
        synchronized (outageLog) {
            retired = true;
            if (outageLogged) {
                // its outage line had no end: the new store says nothing of an outage it did not
                // see begin, and this one does not log its recovery (Redis review, thirty-second round)
                outageLogged = false;
                log(Level.WARNING, "rate-limit-agent: Redis at " + config.maskedUri() + " was not answering for "
                        + Duration.ofNanos(System.nanoTime() - downSince).toMillis() + " ms when a reload replaced its"
                        + " store; " + followedOnError(failedCalls.sumThenReset()) + ". The new store"
                        + " logs its own outages from now on");
            }
        }
        long delayMillis = Math.min(60_000, Math.max(1_000, 10 * (timeoutNanos / 1_000_000)));
        AgentThreads.daemon("rate-limit-agent-redis-retire", () -> {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            close();
        }).start();
    }

    @Override
    public void close() {
        closed = true;
        connector.shutdownNow();
        commands.shutdownNow();
        pool.close();
        // the calls waiting for a change of the pool (an opening under way, whose end may come
        // after their deadline) look again now, find it closed and follow their on-error
        poolChanged();
    }
}
