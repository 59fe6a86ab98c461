/* The CRC Unitree's SDK2 puts in a LowCmd_ (and a real robot's LowState_):
 * CRC-32 with the MPEG-2 parameters (polynomial 0x04C11DB7, initial value
 * 0xFFFFFFFF, no reflection, no final XOR), fed the message's C memory
 * layout as native 32-bit words, each word most significant bit first,
 * the trailing crc word left out. Table-driven, a byte at a time. */
#include "kernel.h"

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
