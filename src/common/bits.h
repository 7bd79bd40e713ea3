/*
 * bits.h - bit and nibble addressing shared by every payload (internal).
 *
 * Bit order is Redis's: bit offset 0 is the most significant bit of byte 0
 * (GETBIT/SETBIT/BITFIELD semantics), so a local bit array and one stored in a
 * Redis string are byte-identical. 4-bit counters follow BITFIELD u4: counter i
 * occupies bits 4i..4i+3, i.e. the high nibble of byte i/2 for even i.
 */
#ifndef BK_COMMON_BITS_H
#define BK_COMMON_BITS_H

#include <stdint.h>

static inline uint64_t bk_bit_byte(uint64_t bit)
{
    return bit >> 3;
}
static inline uint8_t bk_bit_mask(uint64_t bit)
{
    return (uint8_t)(0x80u >> (bit & 7));
}

/* Bytes needed for `bits` bits. */
static inline uint64_t bk_bits_to_bytes(uint64_t bits)
{
    return bits / 8 + (bits % 8 != 0);
}

/* Shift that selects counter i's nibble within its byte: 4 for even i (high). */
static inline unsigned bk_nibble_shift(uint64_t i)
{
    return (i & 1) ? 0u : 4u;
}

#endif
