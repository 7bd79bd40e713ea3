/*
 * secrets.c - the hash key and the Redis password without putting them on
 * the command line, where every local user reads them in /proc for the
 * whole run (docs/security.md).
 *
 * Key: --key HEX (visible), --key-file F (a file holding the 32 hex digits),
 * or the environment variable BLOOMKIT_KEY (applied by cli_apply_config,
 * unless the config text states a key). Password: in the URL (visible),
 * --password-file F (its first line), or REDISCLI_AUTH, the variable
 * redis-cli reads. An explicit option beats the environment; two explicit
 * sources of one secret are an error, never a silent choice.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Kept reachable until exit (the options point into them). */
static char g_key[80];
static char *g_url;

/* s without surrounding blanks and line ends, in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

static int resolve_key(cli_opts *o)
{
    if (cli_key(o, "key") && o->key_file)
        return cli_fail(o, EXIT_USAGE, "give --key or --key-file, not both");
    if (o->key_file) {
        int rc = 0;
        char *text = cli_read_text_file(o, o->key_file, &rc);
        if (!text)
            return rc;
        const char *k = trim(text);
        if (strlen(k) >= sizeof g_key || strpbrk(k, " \t\r\n")) {
            free(text);
            return cli_fail(o, EXIT_USAGE, "%s: must hold one key (32 hex digits)", o->key_file);
        }
        snprintf(g_key, sizeof g_key, "%s", k);
        free(text);
        cli_set_key(o, "key", g_key);
    }
    return 0; /* BLOOMKIT_KEY: cli_apply_config, where a text's own key wins */
}

/* 1 when the URL carries credentials (an '@' before the path). */
static int has_credentials(const char *url)
{
    const char *auth = strstr(url, "://");
    if (!auth)
        return 0;
    auth += 3;
    const char *end = auth + strcspn(auth, "/?");
    if (strncmp(url, "unix://", 7) == 0) /* unix://[cred@]/path: the path starts with '/' */
        end = strchr(auth, '/') ? strchr(auth, '/') : auth + strlen(auth);
    const char *at = memchr(auth, '@', (size_t)(end - auth));
    return at != NULL;
}

/* url with ":<password>@" after its scheme, the password %-escaped. */
static int with_password(cli_opts *o, const char *password)
{
    const char *auth = strstr(o->redis, "://");
    if (!auth)
        return 0; /* not a URL: the library says so */
    auth += 3;
    const size_t head = (size_t)(auth - o->redis),
                 need = strlen(o->redis) + 3 * strlen(password) + 3;
    free(g_url);
    if (!(g_url = malloc(need)))
        return cli_fail(o, EXIT_IO, "out of memory");
    memcpy(g_url, o->redis, head);
    size_t at = head;
    g_url[at++] = ':';
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)password; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~", *p)) {
            g_url[at++] = (char)*p;
        } else {
            g_url[at++] = '%';
            g_url[at++] = hex[*p >> 4];
            g_url[at++] = hex[*p & 15];
        }
    }
    g_url[at++] = '@';
    strcpy(g_url + at, auth);
    o->redis = g_url;
    return 0;
}

static int resolve_password(cli_opts *o)
{
    if (!o->redis) {
        if (o->password_file)
            return cli_fail(o, EXIT_USAGE, "--password-file goes with --redis URL");
        return 0;
    }
    const int in_url = has_credentials(o->redis);
    if (o->password_file) {
        if (in_url)
            return cli_fail(o, EXIT_USAGE,
                            "--redis URL already holds a password: give it there or in "
                            "--password-file, not both");
        int rc = 0;
        char *text = cli_read_text_file(o, o->password_file, &rc);
        if (!text)
            return rc;
        char *nl = strpbrk(text, "\r\n"); /* the first line */
        if (nl)
            *nl = '\0';
        rc = *text ? with_password(o, text)
                   : cli_fail(o, EXIT_USAGE, "%s: the first line is empty", o->password_file);
        memset(text, 0, strlen(text));
        free(text);
        return rc;
    }
    const char *env = getenv("REDISCLI_AUTH");
    if (!in_url && env && *env)
        return with_password(o, env);
    return 0;
}

int cli_resolve_secrets(cli_opts *o)
{
    int rc = o->allowed & OPT_KEYS ? resolve_key(o) : 0;
    return rc ? rc : resolve_password(o);
}
