/* fuzz_module_args.c - libFuzzer target: the Redis module's argument parsing
 * (module/args.c): module arguments and BF.RESERVE / BF.INSERT options.
 * Input: a selector byte, then arguments separated by 0xFF (any other byte,
 * NUL included, is part of an argument). Every parse succeeds or gives an
 * error text; what succeeds gives options in range, and a config that is
 * valid or refused with a text. Selector 3 sets settings one at a time, as
 * CONFIG SET does: a refusal says why and changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t which = data[0] % 4;
    bkm_arg args[MAX_ARGS];
    size_t n = 0, start = 1;
    for (size_t i = 1; i <= size && n < MAX_ARGS; i++)
        if (i == size || data[i] == 0xFF) {
            args[n].p = (const char *)data + start;
            args[n].n = i - start;
            n++;
            start = i + 1;
        }
    bkm_settings s;
    char err[400];
    err[0] = '\0';
    if (which == 0) {
        if (bkm_settings_parse(&s, args, n, err, sizeof err) != 0 && err[0] == '\0')
            abort(); /* refused without a message */
        return 0;
    }
    if (which == 3) {
        static bkm_settings s3, before;
        if (bkm_settings_defaults(&s3) != 0)
            abort(); /* the defaults always hold */
        for (size_t i = 0; i < n; i++) {
            const size_t row = (args[i].n ? (unsigned char)args[i].p[0] : 0u) % bkm_setting_count;
            const bkm_arg v = {args[i].n ? args[i].p + 1 : "", args[i].n ? args[i].n - 1 : 0};
            before = s3;
            err[0] = '\0';
            if (bkm_setting_set(&s3, row, v, err, sizeof err) != 0 &&
                (err[0] == '\0' || memcmp(&before, &s3, sizeof s3) != 0))
                abort(); /* refused without a message, or changed by a refusal */
        }
        return 0;
    }
    if (bkm_settings_parse(&s, NULL, 0, err, sizeof err) != 0)
        abort(); /* the defaults always hold */
    bkm_bf_opts o;
    const int rc = which == 1 ? bkm_parse_reserve(&s, args, n, &o, err, sizeof err)
                              : bkm_parse_insert(&s, args, n, &o, err, sizeof err);
    if (rc == BKM_ARGS_ERROR && (err[0] == '\0' || strpbrk(err, "\r\n")))
        abort(); /* an error reply is one line of text (RedisBloom's have no "ERR ") */
    if (rc != BKM_ARGS_OK)
        return 0;
    if (!(o.error_rate > 0 && o.error_rate < 1) || o.capacity < 1 || o.expansion < 1 ||
        (which == 2 && (o.items < 1 || o.items >= n)))
        abort(); /* accepted out of range */
    bk_config cfg;
    if (bkm_bf_config(&s, &o, &cfg, err, sizeof err) != 0 && strncmp(err, "ERR ", 4) != 0)
        abort();
    return 0;
}
