/* fuzz_config.c - libFuzzer target: the config text parser. Any input either
 * parses or is refused with a message; what parses formats back to text that
 * parses to the same configuration. */
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
    free(text);
    return 0;
}
