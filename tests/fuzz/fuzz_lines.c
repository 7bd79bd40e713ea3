/* fuzz_lines.c - libFuzzer target: the command's line reader (CRLF, NUL,
 * huge lines, no final terminator). The first byte picks the delimiter; the
 * records read must put the input back together byte for byte, each key
 * being its record without the terminator (and, for LF records, without a
 * CR before it or ending the last line). The regression input
 * tests/fuzz/regress/lines/unterminated-cr is the first thing this target
 * found: a last line "\r\r" without LF, keyed as "\r" (the harness expected
 * the CR kept; the reader's rule, now documented in stream.h, strips it). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char delim = (data[0] & 1) ? '\0' : '\n';
    data++;
    size--;
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    /* small inputs fit the pipe buffer; bigger ones are cut to fit */
    const size_t n = size > 60000 ? 60000 : size;
    if (n && write(fds[1], data, n) != (ssize_t)n)
        abort();
    close(fds[1]);
    line_reader lr;
    if (lr_init(&lr, fds[0], delim) != 0) {
        close(fds[0]);
        return 0;
    }
    size_t at = 0;
    const uint8_t *raw;
    size_t rawlen, keylen;
    int rc;
    while ((rc = lr_next(&lr, &raw, &rawlen, &keylen)) == 1) {
        if (rawlen == 0 || keylen > rawlen || at + rawlen > n || memcmp(raw, data + at, rawlen))
            abort();
        const int terminated = raw[rawlen - 1] == (uint8_t)delim;
        size_t expect = rawlen - (size_t)terminated;
        /* a CR before the LF, or ending an unterminated last line, is not
         * part of the key (a CRLF file whose last line lacks its LF) */
        if (delim == '\n' && expect > 0 && raw[expect - 1] == '\r')
            expect--;
        if (keylen != expect || (!terminated && at + rawlen != n))
            abort(); /* only the last record may lack its terminator */
        at += rawlen;
    }
    if (rc != 0 || at != n)
        abort();
    lr_free(&lr);
    close(fds[0]);
    return 0;
}
