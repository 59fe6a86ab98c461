/* stand_client: make a CyberDog 2 compatible controller (motiond) stand up.
 *
 * It sends robot_control_cmd mode 12 (recovery stand), gait 0, re-sends the
 * same command every 100 ms as the heartbeat (the controller lies the robot
 * down 0.5 s after the last one), and prints robot_control_response whenever
 * it changes, until the response shows mode 12 gait 0 at
 * order_process_bar >= 95.
 *
 * Exit codes: 0 standing, 1 usage or LCM error, 3 timeout.
 *
 * Commands and responses travel on different UDP ports (7671 and 7670 in
 * motiond's config), so the client opens one LCM instance for each.
 */
#include <lcm/lcm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msgs_robot_control_cmd_lcmt.h"
#include "msgs_robot_control_response_lcmt.h"

#define STAND_MODE 12
#define STAND_GAIT 0
#define DONE_BAR 95        /* the official examples' "finished" threshold */
#define HEARTBEAT_S 0.1

static const char *USAGE =
    "usage: stand_client [--cmd-url URL] [--resp-url URL] [--prefix P]\n"
    "                    [--cmd-channel NAME] [--resp-channel NAME] [--timeout S]\n"
    "  --cmd-url URL       where commands go (default udpm://239.255.76.67:7671?ttl=0)\n"
    "  --resp-url URL      where responses come from (default udpm://239.255.76.67:7670?ttl=0)\n"
    "  --prefix P          put P before both channel names (a namespaced daemon)\n"
    "  --cmd-channel NAME  default robot_control_cmd\n"
    "  --resp-channel NAME default robot_control_response\n"
    "  --timeout S         give up after S seconds (default 10)\n";

struct progress {
    double start;
    int seen;                                  /* a response has arrived */
    int done;                                  /* ... and it shows the stand finished */
    msgs_robot_control_response_lcmt last;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The controller takes a command only when its life_count differs from the
 * last one it accepted (initially -1), and remembers that value for as long
 * as it runs; the heartbeat repeats the same value. A random value other
 * than -1 matches what a previous client left with a chance of 1 in 255, and
 * then the command is ignored and this client times out: run it again.
 * `motionctl send` avoids even that by reading last_life_count from
 * motiond's controller_status and adding one. */
static int8_t fresh_life_count(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srand((unsigned)ts.tv_nsec ^ (unsigned)getpid());
    int value = rand() % 255 - 128;            /* -128..126 */
    return (int8_t)(value == -1 ? 127 : value);
}

static void print_response(const struct progress *p, const msgs_robot_control_response_lcmt *r)
{
    printf("%6.2f s  response: mode %d gait %d switch_status %d order_process_bar %d\n",
           now_s() - p->start, r->mode, r->gait_id, r->switch_status, r->order_process_bar);
    fflush(stdout);
}

static void on_response(const lcm_recv_buf_t *rbuf, const char *channel,
                        const msgs_robot_control_response_lcmt *r, void *user)
{
    (void)rbuf;
    (void)channel;
    struct progress *p = user;
    /* Responses come at 50 Hz: print only the ones that say something new. */
    int changed = !p->seen || r->mode != p->last.mode || r->gait_id != p->last.gait_id ||
                  r->switch_status != p->last.switch_status ||
                  r->order_process_bar != p->last.order_process_bar;
    if (changed)
        print_response(p, r);
    p->last = *r;
    p->seen = 1;
    if (r->mode == STAND_MODE && r->gait_id == STAND_GAIT && r->order_process_bar >= DONE_BAR)
        p->done = 1;
}

int main(int argc, char **argv)
{
    const char *cmd_url = "udpm://239.255.76.67:7671?ttl=0";
    const char *resp_url = "udpm://239.255.76.67:7670?ttl=0";
    const char *prefix = "", *cmd_name = "robot_control_cmd", *resp_name = "robot_control_response";
    double timeout = 10.0;

    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fputs(USAGE, stdout);
            return 0;
        }
        if (val == NULL) {
            fprintf(stderr, "stand_client: %s needs a value\n%s", opt, USAGE);
            return 1;
        }
        i++;
        if (!strcmp(opt, "--cmd-url")) cmd_url = val;
        else if (!strcmp(opt, "--resp-url")) resp_url = val;
        else if (!strcmp(opt, "--prefix")) prefix = val;
        else if (!strcmp(opt, "--cmd-channel")) cmd_name = val;
        else if (!strcmp(opt, "--resp-channel")) resp_name = val;
        else if (!strcmp(opt, "--timeout")) {
            char *end;
            timeout = strtod(val, &end);
            if (*end != '\0' || !(timeout > 0)) {
                fprintf(stderr, "stand_client: --timeout wants seconds > 0, not %s\n", val);
                return 1;
            }
        } else {
            fprintf(stderr, "stand_client: unknown option %s\n%s", opt, USAGE);
            return 1;
        }
    }
    char cmd_channel[256], resp_channel[256];
    snprintf(cmd_channel, sizeof cmd_channel, "%s%s", prefix, cmd_name);
    snprintf(resp_channel, sizeof resp_channel, "%s%s", prefix, resp_name);

    lcm_t *cmd_lcm = lcm_create(cmd_url);
    lcm_t *resp_lcm = lcm_create(resp_url);
    if (cmd_lcm == NULL || resp_lcm == NULL) {
        fprintf(stderr, "stand_client: cannot open LCM at %s\n",
                cmd_lcm == NULL ? cmd_url : resp_url);
        return 1;
    }
    struct progress p = {.start = now_s()};
    /* LCM reads the channel as a regular expression; a plain name matches itself. */
    msgs_robot_control_response_lcmt_subscribe(resp_lcm, resp_channel, on_response, &p);

    msgs_robot_control_cmd_lcmt cmd;
    memset(&cmd, 0, sizeof cmd);               /* every other field 0: continuous stand */
    cmd.mode = STAND_MODE;
    cmd.gait_id = STAND_GAIT;
    cmd.life_count = fresh_life_count();
    printf("sending mode %d gait %d life_count %d on %s (%s), responses from %s (%s)\n",
           cmd.mode, cmd.gait_id, cmd.life_count, cmd_channel, cmd_url, resp_channel, resp_url);
    fflush(stdout);

    double deadline = p.start + timeout, next_beat = p.start;
    int code = 3;
    while (1) {
        double t = now_s();
        if (p.done) {
            printf("done: mode %d gait %d at order_process_bar %d after %.2f s\n",
                   p.last.mode, p.last.gait_id, p.last.order_process_bar, t - p.start);
            code = 0;
            break;
        }
        if (t >= deadline) {
            printf("timeout: no mode %d gait %d at order_process_bar >= %d within %g s ",
                   STAND_MODE, STAND_GAIT, DONE_BAR, timeout);
            if (p.seen)
                printf("(last response: mode %d gait %d switch_status %d order_process_bar %d)\n",
                       p.last.mode, p.last.gait_id, p.last.switch_status,
                       p.last.order_process_bar);
            else
                printf("(no response received)\n");
            break;
        }
        if (t >= next_beat) {                  /* first send, then the heartbeat */
            msgs_robot_control_cmd_lcmt_publish(cmd_lcm, cmd_channel, &cmd);
            next_beat += HEARTBEAT_S;
            if (next_beat < t)                 /* fell behind: no burst of catch-up sends */
                next_beat = t + HEARTBEAT_S;
        }
        double until = next_beat < deadline ? next_beat : deadline;
        int wait_ms = (int)((until - now_s()) * 1000.0) + 1;
        if (lcm_handle_timeout(resp_lcm, wait_ms > 0 ? wait_ms : 0) < 0) {
            fprintf(stderr, "stand_client: LCM receive failed\n");
            code = 1;
            break;
        }
    }
    /* No more heartbeats from here: the controller lies the robot down 0.5 s later. */
    lcm_destroy(resp_lcm);
    lcm_destroy(cmd_lcm);
    return code;
}
