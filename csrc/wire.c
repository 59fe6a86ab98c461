/* The joint command's LCM encoding, written straight from the kernel's
 * output buffers into a caller-owned byte buffer: the one message published
 * every tick costs no Python objects (see kernel.h), through the robot's
 * joint map (controller/robot/config/joint_map.py). */
#include "kernel.h"

#include <string.h>

static uint8_t *put_u64(uint8_t *b, uint64_t v)
{
    for (int i = 7; i >= 0; i--) { b[i] = (uint8_t)(v & 0xff); v >>= 8; }
    return b + 8;
}

/* n values, each `scale[k] * values[order[k]] + shift[k]` (order NULL: k;
 * scale, shift NULL: 1, 0), as big-endian float32. */
static uint8_t *put_floats(uint8_t *b, const double *values, int32_t n, const int32_t *order,
                           const double *scale, const double *shift)
{
    for (int32_t k = 0; k < n; k++) {
        double v = values[order ? order[k] : k];
        if (scale) v *= scale[k];
        if (shift) v += shift[k];
        const float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        b[0] = (uint8_t)(u >> 24); b[1] = (uint8_t)(u >> 16);
        b[2] = (uint8_t)(u >> 8);  b[3] = (uint8_t)u;
        b += 4;
    }
    return b;
}

int32_t mk_joint_command_size(int32_t n)
{
    return 8 + 8 + 8 + 2 + 5 * 4 * n;
}

int32_t mk_encode_joint_command(const mk_plan *p, const mk_joint_map *map, uint64_t fingerprint,
                                int64_t utime, int64_t tick, uint8_t *buf, int32_t capacity)
{
    const int32_t n = p->n;
    const int32_t size = mk_joint_command_size(n);
    if (n < 0 || n > 32767 || capacity < size) return -1;
    if (map && map->n != n) return -1;
    const int32_t *order = map ? map->order : NULL;
    const double *dir = map ? map->direction : NULL;
    const double *off = map ? map->offset : NULL;
    uint8_t *b = put_u64(buf, fingerprint);
    b = put_u64(b, (uint64_t)utime);
    b = put_u64(b, (uint64_t)tick);
    b[0] = (uint8_t)((uint16_t)n >> 8); b[1] = (uint8_t)n;
    b += 2;
    b = put_floats(b, p->pos, n, order, dir, off);
    b = put_floats(b, p->vel, n, order, dir, NULL);
    b = put_floats(b, p->kp, n, order, NULL, NULL);
    b = put_floats(b, p->kd, n, order, NULL, NULL);
    put_floats(b, p->tau, n, order, dir, NULL);
    return size;
}
