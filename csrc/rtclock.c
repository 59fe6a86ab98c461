/* Absolute-deadline sleeping on CLOCK_MONOTONIC for the tick loop. Python's
 * time.sleep only sleeps for a relative interval, which adds the time spent
 * computing it to every period. */
#define _POSIX_C_SOURCE 200809L
#include "kernel.h"

#include <errno.h>
#include <time.h>

int64_t mk_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int mk_sleep_until(int64_t deadline_ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000LL);
    ts.tv_nsec = (long)(deadline_ns % 1000000000LL);
    int rc;
    do {
        rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    } while (rc == EINTR);
    return rc;
}
