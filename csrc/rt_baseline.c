/* The benchmark's baseline (make bench): a bare periodic loop with nothing in
 * its body, waking on the same absolute-deadline sleep as motiond's tick
 * (rtclock.c) under the same scheduling settings. Its lateness is what the
 * machine and kernel allow; motiond's is compared against it.
 *
 *   rt_baseline HZ SECONDS PRIORITY SLACK_NS LOCK OUT [BUSY_NS [IDLE_LATENCY_US]]
 *
 * PRIORITY 0 keeps the normal scheduler; LOCK 1 calls mlockall. BUSY_NS
 * (default 0) spins that long after each wake-up, a body as long as motiond's
 * that makes no system call: how often the machine stalls a running thread
 * (a VM's vCPU descheduled by its host, say), as against a sleeping one.
 * IDLE_LATENCY_US (default -1: none) holds motiond's realtime.cpu_dma_latency_us
 * request for the whole run, as the daemon does. Writes one
 * native-endian int64 per tick to OUT: how late (ns) that tick woke after its
 * deadline. A tick a whole period or more late restarts the schedule from
 * now, as motiond does. Prints on stdout which settings were refused. */
#define _GNU_SOURCE
#include "kernel.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 7 || argc > 9) {
        fprintf(stderr, "usage: %s HZ SECONDS PRIORITY SLACK_NS LOCK OUT [BUSY_NS [IDLE_LATENCY_US]]\n",
                argv[0]);
        return 2;
    }
    const int64_t busy = argc >= 8 ? atoll(argv[7]) : 0;
    const long idle_latency = argc == 9 ? atol(argv[8]) : -1;   /* -1: no request */
    const double hz = atof(argv[1]);
    const double seconds = atof(argv[2]);
    const int priority = atoi(argv[3]);
    const int64_t slack = atoll(argv[4]);
    const int lock = atoi(argv[5]);
    if (!(hz > 0.0) || !(seconds > 0.0)) {
        fprintf(stderr, "HZ and SECONDS must be positive\n");
        return 2;
    }
    const int64_t period = (int64_t)(1e9 / hz + 0.5);
    const long ticks = (long)(seconds * hz + 0.5);
    int64_t *late = calloc((size_t)ticks, sizeof *late);
    if (late == NULL) {
        perror("calloc");
        return 1;
    }
    if (priority > 0) {
        struct sched_param sp = { .sched_priority = priority };
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            printf("refused SCHED_FIFO %d: %s\n", priority, strerror(errno));
    }
    int rc = mk_set_timer_slack(slack);
    if (rc != 0) printf("refused timer slack %lld ns: %s\n", (long long)slack, strerror(rc));
    if (lock && (rc = mk_lock_memory()) != 0) printf("refused mlockall: %s\n", strerror(rc));
    if (idle_latency >= 0 && (rc = mk_request_cpu_latency((int32_t)idle_latency)) < 0)
        printf("refused cpu idle latency %ld us: %s\n", idle_latency, strerror(-rc));
    /* touch the buffer now so the loop takes no page faults */
    memset(late, 0, (size_t)ticks * sizeof *late);

    int64_t deadline = mk_now_ns();
    for (long i = 0; i < ticks; i++) {
        const int64_t wake = mk_now_ns();
        const int64_t l = wake - deadline;
        late[i] = l > 0 ? l : 0;
        if (l >= period) deadline = wake;
        while (busy > 0 && mk_now_ns() - wake < busy) {
        }
        deadline += period;
        mk_sleep_until(deadline);
    }

    FILE *out = fopen(argv[6], "wb");
    if (out == NULL || fwrite(late, sizeof *late, (size_t)ticks, out) != (size_t)ticks) {
        perror(argv[6]);
        return 1;
    }
    fclose(out);
    free(late);
    return 0;
}
