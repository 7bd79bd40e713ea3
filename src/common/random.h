/* random.h - cryptographic random bytes for hash keys (internal). */
#ifndef BK_COMMON_RANDOM_H
#define BK_COMMON_RANDOM_H

#include <stddef.h>

/* Fill buf with len bytes from the kernel's CSPRNG. BK_OK or BK_ESYS. */
int bk_random_bytes(void *buf, size_t len);

#endif
