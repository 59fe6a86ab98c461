/* The tick loop's clock and its real-time setup.
 *
 * Python's time.sleep only sleeps for a relative interval, which adds the
 * time spent computing it to every period; mk_sleep_until sleeps to an
 * absolute CLOCK_MONOTONIC deadline. The setup calls have no Python
 * equivalent in the os module (prctl, mlockall). Each returns 0 or an errno
 * value, so the caller can say exactly what the system did not permit. */
#define _GNU_SOURCE
#include "kernel.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

int mk_set_timer_slack(int64_t slack_ns)
{
    return prctl(PR_SET_TIMERSLACK, (unsigned long)slack_ns, 0, 0, 0) == 0 ? 0 : errno;
}

int64_t mk_get_timer_slack(void)
{
    return (int64_t)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}

int mk_lock_memory(void)
{
    return mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? 0 : errno;
}

int mk_unlock_memory(void)
{
    return munlockall() == 0 ? 0 : errno;
}
