/* The tick loop's clock and its real-time setup.
 *
 * Python's time.sleep only sleeps for a relative interval, which adds the
 * time spent computing it to every period; mk_sleep_until sleeps to an
 * absolute CLOCK_MONOTONIC deadline. The setup calls have no Python
 * equivalent in the os module (prctl, mlockall); the CPU idle-latency
 * request is here so that make bench's bare C loop asks for it the same way.
 * The setup calls return 0 or the errno value, mk_request_cpu_latency a
 * descriptor or -errno, so the caller can say exactly what the system did
 * not permit. */
#define _GNU_SOURCE
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

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

int mk_request_cpu_latency(int32_t max_us)
{
    /* The kernel's PM QoS interface: while this descriptor stays open, no CPU
     * enters an idle state whose exit takes longer than max_us. */
    const int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (write(fd, &max_us, sizeof max_us) != (ssize_t)sizeof max_us) {
        const int err = errno != 0 ? errno : EIO;
        close(fd);
        return -err;
    }
    return fd;
}
