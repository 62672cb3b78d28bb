package io.mskmigrate.connect.autorestart;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** Counters of one connector, registered as a standard MBean. */
public final class AutoRestartMetrics implements AutoRestartMetricsMBean {
    final AtomicLong restarts = new AtomicLong();
    final AtomicInteger exhausted = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();

    @Override
    public long getRestarts() {
        return restarts.get();
    }

    @Override
    public int getExhausted() {
        return exhausted.get();
    }

    @Override
    public int getFailed() {
        return failed.get();
    }
}
