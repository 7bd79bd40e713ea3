/* examples/removal.c - a counting filter: keys can be removed again. */
#include <bloomkit.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    bk_config cfg;
    bk_filter *f;
    if (bk_config_parse(&cfg, "variant=counting capacity=10000 fpr=0.01", NULL, 0) != BK_OK ||
        bk_new(&cfg, &f) != BK_OK)
        return 1;
    const char *session = "session:42";
    bk_add(f, session, strlen(session));
    printf("after add:    %d\n", bk_contains(f, session, strlen(session)));
    int rc = bk_remove(f, session, strlen(session));
    printf("remove:       %s\n", bk_strerror(rc));
    printf("after remove: %d\n", bk_contains(f, session, strlen(session)));
    rc = bk_remove(f, session, strlen(session)); /* never underflows */
    printf("remove again: %s\n", bk_strerror(rc));
    bk_free(f);
    return 0;
}
