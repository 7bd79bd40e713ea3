/* fuzz_config.c - libFuzzer target: the config text parser. Any input either
 * parses or is refused with a message; what parses formats back to text that
 * parses to the same configuration; built in layers (the text, then its
 * first line's key=value as a single value) it is refused or built, never
 * more than the text alone says, with a message whenever refused. */
#include "bloomkit_tools.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    bk_config c, back;
    char err[256];
    if (bk_config_parse(&c, text, err, sizeof err) == BK_OK) {
        char out[512];
        const int n = bk_config_format(&c, 1, out, sizeof out);
        if (n < 0 || (size_t)n >= sizeof out ||
            bk_config_parse(&back, out, err, sizeof err) != BK_OK || back.variant != c.variant ||
            back.capacity != c.capacity || back.fpr != c.fpr || back.growth != c.growth ||
            back.tightening != c.tightening || back.hash != c.hash || back.layout != c.layout ||
            back.has_key != c.has_key || memcmp(back.key, c.key, sizeof c.key) != 0 ||
            back.bits != c.bits || back.hashes != c.hashes)
            abort(); /* a configuration that does not survive its own text */
    } else if (!memchr(err, '\0', sizeof err) || err[0] == '\0') {
        abort(); /* refused without a message */
    }
    bk_config_build b;
    bk_config_build_init(&b, NULL);
    bk_config_error e;
    const int trc = bk_config_build_text(&b, text, &e);
    if (trc != BK_OK && e.message[0] == '\0')
        abort();
    const char *eq = strchr(text, '=');
    if (trc == BK_OK && eq) { /* the text's first key, once more: always "given twice" */
        char key[64];
        const size_t klen = (size_t)(eq - text) < sizeof key ? (size_t)(eq - text) : 0;
        memcpy(key, text, klen);
        key[klen] = '\0';
        if (klen && bk_config_build_stated(&b, key) &&
            bk_config_build_set(&b, key, eq + 1, err, sizeof err) != BK_ECONFIG)
            abort(); /* a key stated twice, taken */
    }
    if (trc == BK_OK && bk_config_build_finish(&b, &back, &e) != BK_OK && e.message[0] == '\0')
        abort();
    free(text);
    return 0;
}
