/*
 * payload.c - images of filters (payload.h).
 */
#include "payload.h"

#include <stdio.h>

#include "modclock.h"

int bkm_image(const bk_filter *f, uint8_t **buf, size_t *len)
{
    uint64_t size;
    int rc = bk_save_size(f, &size);
    if (rc != BK_OK)
        return rc;
    if (size > SIZE_MAX)
        return BK_ERANGE;
    uint8_t *p = bkm_alloc((size_t)size);
    if (!p)
        return BK_ENOMEM;
    if ((rc = bk_save_buffer(f, p, (size_t)size, len)) != BK_OK) {
        bkm_free(p);
        return rc;
    }
    *buf = p;
    return BK_OK;
}

int bkm_image_load(const void *buf, size_t len, int64_t saved_ms, uint64_t max_bytes,
                   bk_filter **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!bkm_time_ok(saved_ms)) {
        snprintf(err, errlen, "saved time %llu ms is outside 1970 .. 9999",
                 (unsigned long long)saved_ms);
        return BK_ECORRUPT;
    }
    const uint64_t slack = (uint64_t)1 << 20; /* the largest header, and then some */
    if (max_bytes < UINT64_MAX - slack && len > max_bytes + slack) {
        snprintf(err, errlen, "an image of %zu bytes is over the module's MAX_BYTES (%llu)", len,
                 (unsigned long long)max_bytes);
        return BK_ERANGE;
    }
    bkm_clock_pin(saved_ms);
    bk_filter *f;
    int rc = bk_load_buffer(buf, len, &f);
    bkm_clock_unpin();
    if (rc != BK_OK) {
        snprintf(err, errlen, "%s", bk_last_error());
        return rc;
    }
    bk_config cfg;
    bk_get_config(f, &cfg);
    if (max_bytes != UINT64_MAX && bk_variant_grows(cfg.variant) &&
        (cfg.max_bytes == 0 || cfg.max_bytes > max_bytes)) {
        /* it would grow past the limit on a later add: say so now */
        snprintf(err, errlen,
                 "a %s filter that may grow to %s; this module takes growing filters with "
                 "max_bytes of at most %llu (its MAX_BYTES)",
                 bk_variant_name(cfg.variant), cfg.max_bytes ? "more than that" : "any size",
                 (unsigned long long)max_bytes);
        bk_free(f);
        return BK_ERANGE;
    }
    *out = f;
    return BK_OK;
}
