/* examples/first_filter.c - a classic filter: build, add, query. */
#include <bloomkit.h>
#include <stdio.h>

int main(void)
{
    bk_config cfg;
    char err[256];
    if (bk_config_parse(&cfg, "variant=standard capacity=100000 fpr=0.001", err, sizeof err)) {
        fprintf(stderr, "config: %s\n", err);
        return 2;
    }
    bk_filter *f;
    int rc = bk_new(&cfg, &f);
    if (rc != BK_OK) {
        fprintf(stderr, "bk_new: %s\n", bk_strerror(rc));
        return 1;
    }
    bk_add(f, "https://example.org/", 20);
    printf("seen example.org: %d\n", bk_contains(f, "https://example.org/", 20));
    printf("seen example.com: %d\n", bk_contains(f, "https://example.com/", 20));
    bk_free(f);
    return 0;
}
