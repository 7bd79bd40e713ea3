/* config.h - config validation shared by the parser and bk_new (internal). */
#ifndef BK_COMMON_CONFIG_H
#define BK_COMMON_CONFIG_H

#include "export.h"

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* BK_OK if every field of c is within the limits in bloomkit.h, else
 * BK_ECONFIG with a one-line reason in err (when err is not NULL). */
BK_INTERNAL int bk_config_validate(const bk_config *c, char *err, size_t errlen);

/* Hex digits: the value of one (-1 if it is none), and n bytes as 2n
 * lowercase digits plus a NUL into out. */
BK_INTERNAL int bk_hex_value(char c);
BK_INTERNAL void bk_hex_encode(const uint8_t *bytes, size_t n, char *out);

/* snprintf into a caller's error buffer; does nothing when err is NULL or
 * errlen is 0. */
BK_INTERNAL void bk_errorf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
