package io.mskmigrate.connect.autorestart;

/** JMX view of one connector's automatic restarts ({@code io.mskmigrate.connect:type=auto-restart,connector=NAME}). */
public interface AutoRestartMetricsMBean {
    /** Restart requests sent for this connector (connector or tasks) since the worker started. */
    long getRestarts();

    /** Tasks (or the connector) that reached the restart cap and stay FAILED: an operator must act. */
    int getExhausted();

    /** Tasks (or the connector) seen FAILED at the last check. */
    int getFailed();
}
