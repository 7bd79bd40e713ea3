/* hex.h - hexadecimal digits, one byte to two (internal). */
#ifndef BK_COMMON_HEX_H
#define BK_COMMON_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The value of one hex digit (either case), or -1 if c is none. */
int bk_hex_value(char c);
/* n bytes as 2n lowercase digits plus a NUL into out (2n + 1 bytes). */
void bk_hex_encode(const uint8_t *bytes, size_t n, char *out);

#endif
