/* examples/growth.c - a scalable filter grows past its initial capacity
 * while keeping the false-positive rate under its target. */
#include <bloomkit.h>
#include <stdio.h>

int main(void)
{
    bk_config cfg;
    bk_filter *f;
    if (bk_config_parse(&cfg, "variant=scalable capacity=1000 fpr=0.001", NULL, 0) != BK_OK ||
        bk_new(&cfg, &f) != BK_OK)
        return 1;
    char url[64];
    unsigned long fresh = 0;
    for (int i = 0; i < 100000; i++) {
        const int n = snprintf(url, sizeof url, "https://example.org/page/%d", i % 50000);
        fresh += bk_add(f, url, (size_t)n) == 1;
    }
    bk_filter_stats st;
    bk_stats(f, &st);
    printf("new urls %lu, slices %u, memory %llu bytes, estimated rate %.2e\n", fresh, st.slices,
           (unsigned long long)st.bytes, st.est_fpr);
    bk_free(f);
    return 0;
}
