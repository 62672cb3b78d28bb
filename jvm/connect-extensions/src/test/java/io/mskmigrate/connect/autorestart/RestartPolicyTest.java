package io.mskmigrate.connect.autorestart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.mskmigrate.connect.autorestart.RestartPolicy.Decision;
import org.junit.jupiter.api.Test;

class RestartPolicyTest {

    @Test
    void backoffGrowsExponentiallyUpToTheMaximum() {
        RestartPolicy p = new RestartPolicy(1000, 2.0, 5000, 10, 60000);
        assertEquals(1000, p.backoffMs(1));
        assertEquals(2000, p.backoffMs(2));
        assertEquals(4000, p.backoffMs(3));
        assertEquals(5000, p.backoffMs(4));
        assertEquals(5000, p.backoffMs(9));
    }

    @Test
    void aFailedTaskIsRestartedOnlyAfterItsBackoff() {
        RestartPolicy p = new RestartPolicy(1000, 2.0, 60000, 10, 60000);
        assertEquals(Decision.WAIT, p.onFailed("c/task-0", 0));
        assertEquals(Decision.WAIT, p.onFailed("c/task-0", 999));
        assertEquals(Decision.RESTART, p.onFailed("c/task-0", 1000));
        // second attempt needs 2000 ms more
        assertEquals(Decision.WAIT, p.onFailed("c/task-0", 2999));
        assertEquals(Decision.RESTART, p.onFailed("c/task-0", 3000));
        assertEquals(2, p.attempts("c/task-0"));
    }

    @Test
    void afterTheCapTheTaskIsLeftFailedAndCountedAsExhausted() {
        RestartPolicy p = new RestartPolicy(0, 1.0, 0, 2, 60000);
        assertEquals(Decision.RESTART, p.onFailed("c/task-1", 1));
        assertEquals(Decision.RESTART, p.onFailed("c/task-1", 2));
        assertEquals(Decision.GIVE_UP, p.onFailed("c/task-1", 3));
        assertEquals(Decision.WAIT, p.onFailed("c/task-1", 1_000_000));
        assertEquals(1, p.exhausted("c/"));
        assertEquals(0, p.exhausted("other/"));
    }

    @Test
    void aTaskRunningLongerThanTheStablePeriodStartsAgainAtTheFirstStep() {
        RestartPolicy p = new RestartPolicy(0, 2.0, 100, 1, 500);
        assertEquals(Decision.RESTART, p.onFailed("c/task-0", 1));
        p.onRunning("c/task-0", 10);
        p.onRunning("c/task-0", 400); // not yet stable
        assertEquals(1, p.attempts("c/task-0"));
        p.onRunning("c/task-0", 510);
        assertEquals(0, p.attempts("c/task-0"));
        assertEquals(Decision.RESTART, p.onFailed("c/task-0", 600));
    }

    @Test
    void aFailureBeforeTheStablePeriodKeepsCounting() {
        RestartPolicy p = new RestartPolicy(0, 1.0, 0, 1, 500);
        assertEquals(Decision.RESTART, p.onFailed("c/task-0", 1));
        p.onRunning("c/task-0", 10);
        assertEquals(Decision.GIVE_UP, p.onFailed("c/task-0", 100));
    }

    @Test
    void nonsensicalSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new RestartPolicy(1000, 0.5, 5000, 3, 0));
        assertThrows(IllegalArgumentException.class, () -> new RestartPolicy(1000, 2, 500, 3, 0));
    }
}
