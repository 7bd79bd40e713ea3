/*
 * cmd_import.c - import: a Redis set's members into a shared filter
 * (bk_redis_import_set), so that a crawl moves from scrapy-redis's
 * duplicate filter to bloomkit's without fetching again what it fetched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stream.h"

static const char import_usage[] =
    "usage: bloomkit import --redis URL --from-set KEY [--config TEXT | --config-file F]\n"
    "                       [filter options] [--quiet | --progress]\n"
    "Add the members of the Redis set KEY (on the URL's server) to the filter named\n"
    "by the URL: a crawl moves from scrapy-redis's duplicate filter, whose set holds\n"
    "one request fingerprint (40 hex digits) per request, to bloomkit's, which then\n"
    "tells the crawl's requests as seen. A new filter is made of the options over\n"
    "variant=expandable fpr=0.0001 input=scrapy-redis and a capacity of the set's\n"
    "size (on a server without bloomkit's module, the chain that stands for it:\n"
    "variant=scalable tightening=0.85 layout=blocked); an existing one is used as\n"
    "it is. When KEY is the URL's name (in place), the set is first renamed to\n"
    "KEY:imported (or {KEY}:imported), kept, and a second run resumes from it.\n"
    "--input raw adds members as they are. Stop the set's writers first.\n";

const cli_spec cmd_import_spec =
    CLI_SPEC("import", import_usage,
             OPT(REDIS) | OPT(FROM_SET) | O_FILTER_FLAGS | OPT(QUIET) | OPT(PROGRESS),
             OPT(REDIS) | OPT(FROM_SET), 0, 0, "give --redis URL and --from-set KEY");

static int tick(uint64_t done, uint64_t total, void *arg)
{
    progress_work(arg, done, total, "members");
    return cli_stop != 0;
}

int cmd_import(cli_opts *o)
{
    char *text = NULL;
    int rc = cli_config_text(o, &text);
    if (rc)
        return rc;
    progress pg;
    progress_init(&pg, o->quiet, o->progress);
    cli_install_signals();
    bk_redis_import_stats st;
    rc = bk_redis_import_set(o->redis, o->from_set, text, tick, &pg, &st);
    progress_end(&pg);
    free(text);
    if (rc == BK_ECANCELED)
        return cli_signal_exit();
    if (rc != BK_OK)
        return cli_lib_fail(o, rc, "--redis");
    if (!o->quiet) {
        fprintf(stderr, "bloomkit import: %llu members of %s, %llu of them new to the filter",
                (unsigned long long)st.members, st.kept[0] ? st.kept : o->from_set,
                (unsigned long long)st.added);
        if (st.kept[0])
            fprintf(stderr, "; the set is kept as %s (delete it once the crawl has moved)",
                    st.kept);
        fputc('\n', stderr);
    }
    return EXIT_OK;
}
