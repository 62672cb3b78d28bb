package io.mskmigrate.connect.autorestart;

import java.util.HashMap;
import java.util.Map;

/**
 * When a FAILED connector or task may be restarted: exponential back-off between attempts, a cap on
 * attempts, and a reset once the task has run without failing for a stable period (so a failure next
 * week starts again at the first back-off step). Pure logic, driven by the caller's clock.
 */
public final class RestartPolicy {

    /** What to do with one failed unit now. */
    public enum Decision { RESTART, WAIT, GIVE_UP }

    private final long initialBackoffMs;
    private final double multiplier;
    private final long maxBackoffMs;
    private final int maxRestarts;
    private final long stableMs;
    private final Map<String, Unit> units = new HashMap<>();

    private static final class Unit {
        int attempts;
        long nextAllowedAt;
        long runningSince = -1;
        boolean exhausted;
    }

    public RestartPolicy(long initialBackoffMs, double multiplier, long maxBackoffMs, int maxRestarts, long stableMs) {
        if (initialBackoffMs < 0 || multiplier < 1.0 || maxBackoffMs < initialBackoffMs || maxRestarts < 0 || stableMs < 0) {
            throw new IllegalArgumentException("invalid restart policy: initial=" + initialBackoffMs + " multiplier="
                    + multiplier + " max=" + maxBackoffMs + " maxRestarts=" + maxRestarts + " stable=" + stableMs);
        }
        this.initialBackoffMs = initialBackoffMs;
        this.multiplier = multiplier;
        this.maxBackoffMs = maxBackoffMs;
        this.maxRestarts = maxRestarts;
        this.stableMs = stableMs;
    }

    /** Back-off before attempt number {@code attempt} (1-based): initial * multiplier^(attempt-1), capped. */
    public long backoffMs(int attempt) {
        double b = initialBackoffMs * Math.pow(multiplier, Math.max(0, attempt - 1));
        return (long) Math.min(b, (double) maxBackoffMs);
    }

    /** The unit {@code key} is FAILED at {@code now}. RESTART means: restart it and count the attempt. */
    public synchronized Decision onFailed(String key, long now) {
        Unit u = units.computeIfAbsent(key, k -> new Unit());
        u.runningSince = -1;
        if (u.exhausted) {
            return Decision.WAIT;
        }
        if (u.attempts >= maxRestarts) {
            u.exhausted = true;
            return Decision.GIVE_UP;
        }
        if (u.nextAllowedAt == 0) { // first time seen failed: wait the first back-off step
            u.nextAllowedAt = now + backoffMs(u.attempts + 1);
        }
        if (now < u.nextAllowedAt) {
            return Decision.WAIT;
        }
        u.attempts++;
        u.nextAllowedAt = now + backoffMs(u.attempts + 1);
        return Decision.RESTART;
    }

    /** The unit {@code key} is RUNNING at {@code now}: after {@code stableMs} its history is forgotten. */
    public synchronized void onRunning(String key, long now) {
        Unit u = units.get(key);
        if (u == null) {
            return;
        }
        if (u.runningSince < 0) {
            u.runningSince = now;
        } else if (now - u.runningSince >= stableMs) {
            units.remove(key);
        }
    }

    /** Restart attempts since the last reset. */
    public synchronized int attempts(String key) {
        Unit u = units.get(key);
        return u == null ? 0 : u.attempts;
    }

    /** Units that reached the cap and stay FAILED until an operator acts. */
    public synchronized int exhausted(String keyPrefix) {
        int n = 0;
        for (Map.Entry<String, Unit> e : units.entrySet()) {
            if (e.getKey().startsWith(keyPrefix) && e.getValue().exhausted) {
                n++;
            }
        }
        return n;
    }

    /** Forget units no longer present (connector deleted, task count lowered). */
    public synchronized void retain(java.util.Set<String> present) {
        units.keySet().retainAll(present);
    }
}
