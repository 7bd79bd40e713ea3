/*
 * cmd_report.c - plan and info: figures as aligned text or one JSON object.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <time.h>

#include "cli.h"

static const char plan_usage[] =
    "usage: bloomkit plan --capacity N --fpr P [filter options] [--json]\n"
    "       bloomkit plan --capacity N --fpr P --compare [--layout L] [--json]\n"
    "       bloomkit plan --bits M [--hashes K] --capacity N [filter options] [--json]\n"
    "       bloomkit plan --bits M --fpr P [filter options] [--json]\n"
    "Size a filter for N keys at false-positive rate P: bits m = ceil(-N ln P / ln^2 2),\n"
    "bytes, probes k and the rate after N keys. counting filters take 4x the bytes;\n"
    "--layout blocked (all probes in one 64-byte line) takes more bits for the same\n"
    "rate; scalable shows its first slice (rate P * (1 - tightening)); --window T\n"
    "(variant=window, N keys per window T) shows every live generation: memory, bits\n"
    "per key of the window and the rate of a lookup. --compare: every variant's plan\n"
    "for N keys at P, side by side (bits per key, bytes, k, rate, whether it removes).\n";
static const char info_usage[] =
    "usage: bloomkit info FILE [--json] [--show-key]\n"
    "       bloomkit info --redis URL [--json] [--show-key]\n"
    "Show a filter's figures (docs/figures.md lists them): variant, size, k, keys\n"
    "added, estimated distinct keys, fill, rates, slices, ... The hash key is\n"
    "secret and shown only with --show-key.\n";

/* A JSON number: finite doubles as %.6g, others as null (JSON has no inf). */
static void json_num(const char *name, double v, int last)
{
    if (isfinite(v))
        printf("\"%s\":%.6g%s", name, v, last ? "" : ",");
    else
        printf("\"%s\":null%s", name, last ? "" : ",");
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one
 * (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF). */
static int utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    const int n = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
                  : s[0] >= 0xe0 && s[0] <= 0xef ? 3
                  : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                                 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * and a byte that is not UTF-8 (a file name may hold any) written as
 * U+FFFD, so the output is always valid JSON. */
static void json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        const int n = utf8_len(c);
        if (n == 0) {
            fputs("\\ufffd", stdout);
            c++;
        } else if (*c == '"' || *c == '\\') {
            printf("\\%c", *c++);
        } else if (*c < 0x20 || *c == 0x7f) {
            printf("\\u%04x", *c++);
        } else {
            fwrite(c, 1, (size_t)n, stdout);
            c += n;
        }
    }
    putchar('"');
}

/* What a filter's cells are, for "size": bits, counters, or the slots of a
 * cuckoo table (its fingerprint key, which only it has, says their width). */
static const char *cells_word(const bk_config *cfg, char *buf, size_t n)
{
    char fp[16];
    if (bk_config_get(cfg, "fingerprint", fp, sizeof fp) > 0 && strcmp(fp, "0") != 0)
        snprintf(buf, n, "slots of %s-bit fingerprints", fp);
    else
        snprintf(buf, n, "%s", cfg->variant == BK_VARIANT_COUNTING ? "counters" : "bits");
    return buf;
}

/* The keys a filter of cfg would choose for itself (bk_config_resolve),
 * each as "  name value" (json: ,"name":"value"). */
static void print_chosen(const bk_config *cfg, int json)
{
    bk_config chosen;
    if (bk_config_resolve(cfg, &chosen) != BK_OK)
        return;
    for (unsigned i = 0;; i++) {
        const char *name = bk_config_key(i, NULL, 0, NULL);
        if (!name)
            break;
        char was[64], now[64];
        if (bk_config_get(cfg, name, was, sizeof was) < 0 ||
            bk_config_get(&chosen, name, now, sizeof now) < 0 || strcmp(was, now) == 0)
            continue;
        if (json)
            printf("\"%s\":\"%s\",", name, now);
        else
            printf("%-13s %s (chosen for the rate)\n", name, now);
    }
}

const cli_spec cmd_plan_spec =
    CLI_SPEC("plan", plan_usage, OPT_KEYS | OPT(JSON) | OPT(COMPARE), 0, 0, 0, NULL);

/* plan --bits M --fpr P: the keys that fit, into *cfg as its capacity (and
 * P as its fpr), with the plan of that filter in *p. */
static int plan_fit(cli_opts *o, bk_config *cfg, bk_plan *p)
{
    const char *fpr = cli_key(o, "fpr");
    cli_set_key(o, "fpr",
                NULL); /* the rate asked, not the filter's: with bits it would contradict */
    int rc = cli_apply_config(o, cfg);
    cli_set_key(o, "fpr", fpr);
    if (rc)
        return rc;
    bk_config fit = *cfg; /* the rate read as config reads it, on an unpinned copy */
    fit.bits = 0;
    char err[256];
    if (bk_config_set(&fit, "fpr", fpr, err, sizeof err) != BK_OK)
        return cli_fail(o, EXIT_USAGE, "--%s", err);
    fit.bits = cfg->bits;
    rc = bk_plan_capacity(&fit, &cfg->capacity, p);
    if (rc != BK_OK)
        return cli_fail(o, rc == BK_ERANGE ? EXIT_USAGE : cli_exit_for(rc),
                        "%llu bits at rate %s: %s", (unsigned long long)cfg->bits, fpr,
                        rc == BK_ERANGE ? "not even one key fits" : bk_last_error());
    cfg->fpr = fit.fpr;
    return 0;
}

/* plan --compare: the plan of every variant the library has for cfg's
 * capacity and rate (their other keys at each one's defaults), one row
 * each: the memory a key costs, the rate at capacity, and whether it
 * removes. */
static int plan_compare(const cli_opts *o, const bk_config *cfg)
{
    if (!o->json)
        printf("%-10s %10s %14s %4s %13s  %s\n", "variant", "bits/key", "bytes", "k",
               "expected fpr", "removes");
    else
        printf("[");
    for (int v = 0; bk_variant_name((bk_variant)v); v++) {
        bk_config c;
        bk_plan p;
        bk_config_init(&c);
        c.variant = (bk_variant)v;
        c.capacity = cfg->capacity;
        c.fpr = cfg->fpr;
        c.layout = cfg->layout;
        const int rc = bk_plan_config(&c, &p);
        const char *name = bk_variant_name(c.variant);
        if (rc != BK_OK)
            return cli_fail(o, cli_exit_for(rc), "%s: %s", name, bk_last_error());
        const int removes = bk_variant_removes(c.variant);
        if (o->json) {
            printf("%s{\"variant\":\"%s\",\"bytes\":%llu,\"k\":%u,", v ? "," : "", name,
                   (unsigned long long)p.bytes, p.k);
            json_num("bits_per_key", p.bits_per_key, 0);
            json_num("expected_fpr", p.expected_fpr, 0);
            printf("\"removes\":%s}", removes ? "true" : "false");
        } else {
            printf("%-10s %10.2f %14llu %4u %13.4g  %s\n", name, p.bits_per_key,
                   (unsigned long long)p.bytes, p.k, p.expected_fpr, removes ? "yes" : "no");
        }
    }
    if (o->json)
        printf("]\n");
    return EXIT_OK;
}

/* long: the plan's text and JSON forms, side by side so they stay the same. */
int cmd_plan(cli_opts *o)
{
    const char *capacity = cli_key(o, "capacity"), *fpr = cli_key(o, "fpr");
    const int pinned = cli_key(o, "bits") != NULL, fit = pinned && fpr && !capacity;
    if (pinned ? !fit && !capacity : !(capacity && fpr))
        return cli_usage(o, "give --capacity N and --fpr P, --bits M and --capacity N, or --bits "
                            "M and --fpr P");
    if (fit && cli_key(o, "hashes"))
        return cli_usage(o, "--bits M --fpr P finds the keys that fit with the best k: drop "
                            "--hashes, or give --capacity N for the rate with K probes");
    bk_config cfg;
    bk_config_init(&cfg);
    bk_plan p;
    int rc = fit ? plan_fit(o, &cfg, &p) : cli_apply_config(o, &cfg);
    if (rc)
        return rc;
    if (o->compare)
        return fit ? cli_usage(o, "--compare takes --capacity N and --fpr P")
                   : plan_compare(o, &cfg);
    rc = fit ? BK_OK : bk_plan_config(&cfg, &p);
    if (rc != BK_OK)
        return cli_fail(o, cli_exit_for(rc), "cannot size %llu keys at %g: %s",
                        (unsigned long long)cfg.capacity, cfg.fpr,
                        *bk_last_error() ? bk_last_error() : bk_strerror(rc));
    const uint64_t bytes = p.bytes;
    char human[32];
    cli_human_bytes(bytes, human, sizeof human);
    /* window: the window as configured, and window + window / G */
    const int window = cfg.variant == BK_VARIANT_WINDOW;
    char window_text[32] = "", span_text[32] = "";
    if (window) {
        cli_human_duration(cfg.window_ms, window_text, sizeof window_text);
        cli_human_duration(cfg.window_ms + cfg.window_ms / cfg.generations, span_text,
                           sizeof span_text);
    }
    if (o->json) {
        printf("{\"variant\":\"%s\",\"layout\":\"%s\",\"capacity\":%llu,",
               bk_variant_name(cfg.variant), bk_layout_name(cfg.layout),
               (unsigned long long)cfg.capacity);
        json_num("fpr", cfg.bits && !fit ? NAN : cfg.fpr, 0); /* pinned: no target */
        printf("\"pinned\":%s,", cfg.bits ? "true" : "false");
        printf("\"bits\":%llu,\"m\":%llu,\"bytes\":%llu,\"human_bytes\":\"%s\",\"k\":%u,",
               (unsigned long long)p.bits, (unsigned long long)p.bits, (unsigned long long)bytes,
               human, p.k);
        json_num("bits_per_key", p.bits_per_key, 0);
        print_chosen(&cfg, 1);
        if (window)
            printf("\"window\":\"%s\",\"generations\":%llu,", window_text,
                   (unsigned long long)cfg.generations);
        json_num("expected_fpr", p.expected_fpr, 1);
        printf("}\n");
    } else {
        printf("variant       %s\n", bk_variant_name(cfg.variant));
        printf("layout        %s\n", bk_layout_name(cfg.layout));
        printf("capacity      %llu key%s%s\n", (unsigned long long)cfg.capacity,
               cfg.capacity == 1 ? "" : "s",
               window ? " per window"
               : fit  ? " (the most that fit at the target fpr)"
                      : "");
        if (window) {
            printf("window        %s, forgotten %s to %s after they were added\n", window_text,
                   window_text, span_text);
            printf("generations   %llu live at once (G = %llu, and the current one)\n",
                   (unsigned long long)cfg.generations + 1, (unsigned long long)cfg.generations);
        }
        if (cfg.bits && !fit)
            printf("pinned        bits=%llu, %s\n", (unsigned long long)cfg.bits,
                   cfg.hashes ? "hashes as given" : "the best k for the capacity");
        else
            printf("target fpr    %g\n", cfg.fpr);
        print_chosen(&cfg, 0);
        bk_config resolved; /* a cuckoo table's cells are slots of its (chosen) fingerprints */
        char cells[64];
        if (bk_config_resolve(&cfg, &resolved) != BK_OK)
            resolved = cfg;
        if (strcmp(cells_word(&resolved, cells, sizeof cells), "bits") == 0)
            printf("bits (m)      %llu\n", (unsigned long long)p.bits);
        else
            printf("m             %llu %s\n", (unsigned long long)p.bits, cells);
        printf("bytes         %llu (%s)\n", (unsigned long long)bytes, human);
        printf("hashes (k)    %u\n", p.k);
        printf("bits per key  %.2f\n", p.bits_per_key);
        printf("expected fpr  %.4g (after %llu key%s)\n", p.expected_fpr,
               (unsigned long long)cfg.capacity, cfg.capacity == 1 ? "" : "s");
    }
    return EXIT_OK;
}

/* A window filter's generations, oldest first: the span each one's keys
 * were added in, its keys, fill and bytes, and whether lookups still
 * consult it (until a window after its span ends). */
static void print_generations(const bk_filter *f, const bk_config *cfg, uint32_t slices, int json)
{
    const int64_t now = bk_now_ms();
    int first = 1;
    if (json)
        printf(",\"generations\":[");
    for (uint32_t i = 0; i < slices;) {
        bk_slice_stats s;
        bk_slice_info(f, i, &s, sizeof s);
        uint64_t keys = 0, bytes = 0, bits = 0, set = 0;
        uint32_t n = 0;
        for (bk_slice_stats t = s; i < slices; i++, n++) {
            bk_slice_info(f, i, &t, sizeof t);
            if (t.span_start_ms != s.span_start_ms)
                break;
            keys += t.keys;
            bytes += t.bytes;
            bits += t.bits;
            set += t.set_bits;
        }
        const int live = now < s.span_end_ms + (int64_t)cfg->window_ms;
        char from[64], to[64], human[32];
        cli_utc_time(s.span_start_ms, json, from, sizeof from);
        cli_utc_time(s.span_end_ms, json, to, sizeof to);
        cli_human_bytes(bytes, human, sizeof human);
        if (json)
            printf("%s{\"start\":\"%s\",\"end\":\"%s\",\"start_ms\":%lld,\"end_ms\":%lld,"
                   "\"keys\":%llu,\"fill\":%.6g,\"bytes\":%llu,\"slices\":%u,\"live\":%s}",
                   first ? "" : ",", from, to, (long long)s.span_start_ms, (long long)s.span_end_ms,
                   (unsigned long long)keys, (double)set / (double)bits, (unsigned long long)bytes,
                   n, live ? "true" : "false");
        else
            printf("generation    %s .. %s UTC: %llu key%s, fill %.4f, %s, %u slice%s%s\n", from,
                   to, (unsigned long long)keys, keys == 1 ? "" : "s", (double)set / (double)bits,
                   human, n, n == 1 ? "" : "s", live ? "" : " (expired: no longer consulted)");
        first = 0;
    }
    if (json)
        printf("]");
}

const cli_spec cmd_info_spec = CLI_SPEC("info", info_usage, OPT(JSON) | OPT(SHOW_KEY) | OPT(REDIS),
                                        0, 0, 1, "give exactly one FILE or --redis URL");

/* The filter's figures, as the library's table has them (bk_figure_at):
 * json, every row under its name; text, the rows meant for this variant
 * under their labels (a time only when there is one), bits and bytes with
 * their units. */
static void print_figures(const bk_filter_stats *st, const bk_config *cfg, int json)
{
    bk_figure fig;
    for (unsigned i = 0; bk_figure_at(i, st, cfg, &fig, sizeof fig) == 1; i++) {
        if (json) {
            printf(",\"%s\":", fig.name);
            if (fig.type == BK_FIGURE_TEXT)
                json_str(fig.text);
            else if (fig.type == BK_FIGURE_COUNT)
                printf("%llu", (unsigned long long)fig.count);
            else if (fig.type == BK_FIGURE_MS)
                printf("%lld", (long long)fig.ms);
            else if (isfinite(fig.real))
                printf("%.6g", fig.real);
            else
                printf("null");
            continue;
        }
        if (!fig.label || !(fig.variants & (1u << cfg->variant)) ||
            (fig.type == BK_FIGURE_MS && fig.ms == 0))
            continue;
        printf("%-13s ", fig.label);
        char unit[48], human[32], when[64];
        if (fig.type == BK_FIGURE_TEXT)
            printf("%s\n", fig.text);
        else if (fig.type == BK_FIGURE_MS)
            printf("%s UTC\n", cli_utc_time(fig.ms, 0, when, sizeof when));
        else if (fig.type == BK_FIGURE_REAL)
            printf(fig.real >= 1.0 ? "%.0f\n" : "%.4g\n", fig.real);
        else if (strcmp(fig.name, "bits") == 0)
            printf("%llu %s\n", (unsigned long long)fig.count, cells_word(cfg, unit, sizeof unit));
        else if (strcmp(fig.name, "bytes") == 0)
            printf("%llu (%s)\n", (unsigned long long)fig.count,
                   cli_human_bytes(fig.count, human, sizeof human));
        else
            printf("%llu\n", (unsigned long long)fig.count);
    }
}

/* What info adds of its own after the table: the secret key on request, and
 * a window's shape and generations. */
static void print_info_extras(const cli_opts *o, const bk_filter *f, const bk_config *cfg,
                              const bk_filter_stats *st)
{
    char key[33] = "", human[32], w[32], span[32];
    for (size_t i = 0; o->show_key && i < 16; i++)
        snprintf(key + 2 * i, 3, "%02x", cfg->key[i]);
    /* a window's capacity is what was asked, per window; each generation's
     * chain starts at capacity / G (and 1%) */
    bk_slice_stats first;
    const int window = cfg->variant == BK_VARIANT_WINDOW;
    const uint64_t gen_capacity =
        window && bk_slice_info(f, 0, &first, sizeof first) == BK_OK ? first.capacity : 0;
    cli_human_bytes(st->bytes, human, sizeof human);
    cli_human_duration(cfg->window_ms, w, sizeof w);
    if (o->json) {
        printf(",\"human_bytes\":\"%s\"", human);
        if (o->show_key)
            printf(",\"key\":\"%s\"", key);
        if (window)
            printf(",\"window\":\"%s\",\"refresh\":%llu,\"generation_capacity\":%llu", w,
                   (unsigned long long)cfg->refresh, (unsigned long long)gen_capacity);
    } else {
        if (o->show_key)
            printf("key           %s\n", key);
        if (window)
            printf("window        %s in %llu spans of %s%s; a generation starts at %llu keys\n", w,
                   (unsigned long long)cfg->generations,
                   cli_human_duration((cfg->window_ms + cfg->generations - 1) / cfg->generations,
                                      span, sizeof span),
                   cfg->refresh ? "; a sighting renews a key" : "",
                   (unsigned long long)gen_capacity);
    }
    if (window)
        print_generations(f, cfg, st->slices, o->json);
}

int cmd_info(cli_opts *o)
{
    int rc;
    if (o->nargs != (o->redis ? 0 : 1))
        return cli_usage(o, cmd_info_spec.give);
    bk_filter *f;
    char where[512];
    if (o->redis) {
        cli_redact_url(o->redis, where, sizeof where);
        rc = bk_redis_open_existing(o->redis, &f);
        if (rc == BK_EINCOMPAT) /* kept by the Redis module: its figures from a copy */
            rc = bk_redis_pull(o->redis, &f) == BK_OK ? BK_OK : rc;
    } else {
        snprintf(where, sizeof where, "%s", o->args[0]);
        if ((rc = cli_no_such_file(o, o->args[0])) != 0)
            return rc;
        rc = bk_open_mmap(o->args[0], BK_MAP_READONLY, &f);
    }
    if (rc != BK_OK)
        return cli_lib_fail(o, rc, o->redis ? "--redis" : o->args[0]);
    cli_say_redated(o, f, where);
    bk_filter_stats st;
    bk_config cfg;
    if ((rc = bk_stats(f, &st)) != BK_OK || (rc = bk_get_config(f, &cfg)) != BK_OK) {
        bk_free(f);
        return cli_lib_fail(o, rc, where);
    }
    const char *place = o->redis ? "redis" : "file";
    if (o->json) {
        printf("{\"%s\":", place);
        json_str(where);
    } else {
        printf("%-13s %s\n", place, where);
    }
    print_figures(&st, &cfg, o->json);
    print_info_extras(o, f, &cfg, &st);
    if (o->json)
        printf("}\n");
    bk_free(f);
    return EXIT_OK;
}
