/*
 * foreign.h - what a name holds when it is not a bloomkit filter (foreign.c).
 */
#ifndef BK_REDIS_FOREIGN_H
#define BK_REDIS_FOREIGN_H

#include "conn.h"

/* BK_ESERVER with a message that says what the key name holds (a set of N
 * members, a string of N bytes, another type) and what to do: import a
 * set, leave a foreign bitmap alone. For openers that met a key of another
 * type at a filter's NAME. Errors of the TYPE call as bk_rconn_callf. */
int bk_redis_foreign(bk_rconn *c, const char *name);

#endif
