/* The CRC Unitree's SDK2 puts in a LowCmd_ (and a real robot's LowState_):
 * CRC-32 with the MPEG-2 parameters (polynomial 0x04C11DB7, initial value
 * 0xFFFFFFFF, no reflection, no final XOR), fed the message's C memory
 * layout as native 32-bit words, each word most significant bit first,
 * the trailing crc word left out. Table-driven, a byte at a time. */
#include "kernel.h"

#include <string.h>

static uint32_t table[256];
static int table_ready = 0;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i << 24;
        for (int k = 0; k < 8; k++)
            c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
        table[i] = c;
    }
    table_ready = 1;
}

uint32_t mk_crc32_words(const uint32_t *words, int32_t n)
{
    if (!table_ready)
        make_table();
    uint32_t crc = 0xFFFFFFFFu;
    for (int32_t i = 0; i < n; i++) {
        const uint32_t w = words[i];
        for (int shift = 24; shift >= 0; shift -= 8)
            crc = (crc << 8) ^ table[((crc >> 24) ^ (w >> shift)) & 0xFFu];
    }
    return crc;
}

/* A LowCmd_ for n (<= 20) motors, each in servo mode (0x01) with its q, dq,
 * tau, kp and kd, everything else zero, head 0xFE 0xEF, level_flag 0xFF:
 * the SDK's CRC over its C memory layout (812 bytes), then the message as
 * CDR carries it (XCDR1 little-endian: a 4-byte header, then the fields
 * aligned from the body's start) into out (812 bytes). Returns the CRC.
 * The C layout: a 24-byte header (2 pad bytes), 20 motors of 36 bytes
 * (mode, 3 pad, 5 floats, 3 reserved words) from byte 24, the tail from 744,
 * the crc at 808. CDR moves motor 0's mode to byte 22 and everything after
 * it 4 bytes earlier. Little-endian hosts only (as the robot and the SDK). */
uint32_t mk_unitree_lowcmd(const double *q, const double *dq, const double *tau, const double *kp,
                           const double *kd, int32_t n, uint8_t *out)
{
    uint8_t c[812];
    memset(c, 0, sizeof c);
    c[0] = 0xFE; c[1] = 0xEF; c[2] = 0xFF;
    for (int32_t k = 0; k < n && k < 20; k++) {
        uint8_t *m = c + 24 + 36 * k;
        const float f[5] = {(float)q[k], (float)dq[k], (float)tau[k], (float)kp[k], (float)kd[k]};
        m[0] = 0x01;
        memcpy(m + 4, f, sizeof f);
    }
    uint32_t words[202];
    memcpy(words, c, sizeof words);
    const uint32_t crc = mk_crc32_words(words, 202);
    memcpy(c + 808, &crc, 4);
    out[0] = 0x00; out[1] = 0x01; out[2] = 0x00; out[3] = 0x00;
    uint8_t *body = out + 4;
    memcpy(body, c, 22);
    body[22] = c[24];
    body[23] = 0;
    memcpy(body + 24, c + 28, 812 - 28);
    return crc;
}
