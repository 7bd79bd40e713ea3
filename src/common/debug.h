/*
 * debug.h - BK_ASSERT: invariants that the prose of a comment states,
 * checked where it is cheap, in debug builds only (-DBK_DEBUG: the
 * sanitizer builds of `make check-asan` and check-clang-asan). Release
 * builds compile them away: the library never aborts, and these guard the
 * library's own logic, never the caller's input (that is an error code).
 */
#ifndef BK_COMMON_DEBUG_H
#define BK_COMMON_DEBUG_H

#ifdef BK_DEBUG
#include <assert.h>
#define BK_ASSERT(cond) assert(cond)
#else
#define BK_ASSERT(cond) ((void)0)
#endif

#endif
