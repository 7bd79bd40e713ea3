/*
 * bkpy.h - bloomkit._native, the binding's C extension (CPython's C API over
 * the public bloomkit.h and bloomkit_redis.h): what its files share.
 *
 * Files, one job each: module.c (the module, its functions and constants),
 * filter.c (the Filter type: one key at a time, figures, files, combining),
 * batch.c (many keys per library call, the GIL released), keys.c (a Python
 * value as key bytes), config.c (the Config type), lock.c (FileLock),
 * errors.c (library codes as the exceptions of bloomkit/errors.py).
 *
 * Concurrency. Calls that hold the GIL throughout (one local key, figures)
 * are serialized by it. Calls that release it take the filter's rwlock:
 * batches of lookups for reading (they may run together, and beside
 * one-key calls), everything else that releases the GIL for writing (batches
 * of adds and removes, clear, merge, save, sync, close, copy, and every call
 * of a Redis filter, whose one connection serves one call at a time). So a
 * filter's adds are applied one call at a time, and of threads adding one
 * new key exactly one is told it is new. A writer
 * raises `exclusive` under the GIL first, so one-key calls that come
 * meanwhile wait on the rwlock instead of running beside it; the handle is
 * freed only under the write lock, so no call ever sees a freed filter.
 */
#ifndef BKPY_H
#define BKPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"

/* A call that found the filter closed (after taking its lock). */
#define BKPY_CLOSED (-10000)

typedef struct {
    PyObject_HEAD
    bk_filter *f;       /* NULL before opening and after close */
    bk_file_lock *lock; /* path= filters: the writer's lock, held while open */
    int remote;         /* a Redis filter: every call under the write lock */
    int opened;         /* a handle was set once: never another */
    int exclusive;      /* writers running or waiting (changed under the GIL) */
    pthread_rwlock_t rw;
    PyObject *weakrefs;
} bkpy_filter;

typedef struct {
    PyObject_HEAD
    bk_config c;
} bkpy_config;

extern PyTypeObject bkpy_filter_type;
extern PyTypeObject bkpy_config_type;
extern PyTypeObject bkpy_lock_type;

/* errors.c: set the exception of bloomkit.errors.error_for(code, what,
 * detail) (detail NULL: the library's text for code) and return NULL. */
PyObject *bkpy_error(int code, const char *what, const char *detail);
/* The same for the library's detail of this thread's last failed call. */
PyObject *bkpy_error_detail(int code, const char *what);
/* bkpy_error_detail for an operation on a file: what is "prefix PATH" (path:
 * str, bytes or os.PathLike). */
PyObject *bkpy_error_path(int code, const char *prefix, PyObject *path);
/* ValueError: the filter is closed. */
PyObject *bkpy_closed(void);
int bkpy_errors_init(PyObject *module);

/* keys.c: the bytes of a key (bytes, bytearray, memoryview, str as UTF-8),
 * valid while *hold lives, the GIL held or not (a bytearray's or a
 * memoryview's buffer stays exported through *hold: no other thread can
 * resize or free it meanwhile); *hold is a new reference to release
 * (Py_XDECREF, with the GIL) after the call, or NULL. -1 with an exception
 * set. */
int bkpy_key_slow(PyObject *key, const void **p, size_t *n, PyObject **hold);

static inline int bkpy_key(PyObject *key, const void **p, size_t *n, PyObject **hold)
{
    *hold = NULL;
    if (PyBytes_Check(key)) {
        *p = PyBytes_AS_STRING(key);
        *n = (size_t)PyBytes_GET_SIZE(key);
        return 0;
    }
    if (PyUnicode_Check(key)) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(key, &len); /* cached in the str */
        if (!s)
            return -1;
        *p = s;
        *n = (size_t)len;
        return 0;
    }
    return bkpy_key_slow(key, p, n, hold);
}

/* filter.c */
int bkpy_filter_init_type(void);
/* What a handle is, for bkpy_wrap: in this process's own memory (its
 * writers are this object's: the library's single writer), mapped from a
 * file (another process, or a forked child, may write it too), or a Redis
 * filter. */
#define BKPY_OWN    0
#define BKPY_MAPPED 1
#define BKPY_REMOTE 2
/* A new object of `type` (Filter or a subclass) owning f (freed on error). */
PyObject *bkpy_wrap(PyTypeObject *type, bk_filter *f, int kind);
/* Take self's lock for writing with the GIL released (the GIL is held
 * before and after); bkpy_unlock_writer gives it back. */
void bkpy_lock_writer(bkpy_filter *self);
void bkpy_unlock_writer(bkpy_filter *self);
/* The same for readers (batches). */
void bkpy_lock_reader(bkpy_filter *self);
void bkpy_unlock_reader(bkpy_filter *self);

/* batch.c: the batch methods of Filter, and the worker pool they share. */
PyObject *bkpy_update(bkpy_filter *self, PyObject *keys);
PyObject *bkpy_add_many(bkpy_filter *self, PyObject *keys);
PyObject *bkpy_contains_many(bkpy_filter *self, PyObject *keys);
PyObject *bkpy_remove_many(bkpy_filter *self, PyObject *keys);
PyObject *bkpy_set_threads(PyObject *module, PyObject *arg);
PyObject *bkpy_get_threads(PyObject *module, PyObject *unused);

/* config.c */
PyObject *bkpy_config_new(const bk_config *c);
/* py_figures.c: stats()'s dict of st and cfg's figures (new reference, or
 * NULL with an exception), and the module's figures(): [(name, type,
 * [variant, ...], meaning), ...], the library's table of figures. */
PyObject *bkpy_figures_dict(const bk_filter_stats *st, const bk_config *cfg);
PyObject *bkpy_figures(PyObject *m, PyObject *unused);
PyObject *bkpy_config_text_sets(PyObject *module, PyObject *args);
PyObject *bkpy_config_build(PyObject *module, PyObject *args);

#endif
