/*
 * py_filter.c - Filter, the type under bloomkit.BloomFilter: opening, one key at
 * a time, figures, files, combining, closing. Batches are in batch.c; the
 * locking rules in bkpy.h.
 */
#include "bkpy.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bloomkit_redis.h"

/* ---- the lock ----------------------------------------------------------- */

/* Nobody waits for the rwlock while holding the GIL (the GIL is let go
 * first), so holding the rwlock while taking the GIL back cannot deadlock. */
void bkpy_lock_writer(bkpy_filter *self)
{
    self->exclusive++;
    if (pthread_rwlock_trywrlock(&self->rw) == 0)
        return;
    Py_BEGIN_ALLOW_THREADS
    pthread_rwlock_wrlock(&self->rw);
    Py_END_ALLOW_THREADS
}

void bkpy_unlock_writer(bkpy_filter *self)
{
    pthread_rwlock_unlock(&self->rw);
    self->exclusive--;
}

void bkpy_lock_reader(bkpy_filter *self)
{
    if (pthread_rwlock_tryrdlock(&self->rw) == 0)
        return;
    Py_BEGIN_ALLOW_THREADS
    pthread_rwlock_rdlock(&self->rw);
    Py_END_ALLOW_THREADS
}

void bkpy_unlock_reader(bkpy_filter *self)
{
    pthread_rwlock_unlock(&self->rw);
}

/* ---- life ----------------------------------------------------------------- */

static PyObject *filter_tp_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw; /* BloomFilter.__init__ reads them */
    bkpy_filter *self = (bkpy_filter *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#ifdef PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
    /* a writer (save, clear) is not starved by a stream of batches */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    const int rc = pthread_rwlock_init(&self->rw, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0) {
        Py_TYPE(self)->tp_free(self);
        errno = rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return (PyObject *)self;
}

static void filter_dealloc(bkpy_filter *self)
{
    /* no other thread holds a reference, so none is inside a call */
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    if (self->f)
        (void)bk_close(self->f); /* as file objects do, a failure here is lost: close() reports */
    bk_unlock_file(self->lock);
    pthread_rwlock_destroy(&self->rw);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* self takes f; an object opened once is never given another handle. A
 * handle in this process's own memory has one writer at a time (bkpy.h's
 * locking rules; a forked child writes its own copy), which the library is
 * told: its adds then take no locked instruction. */
static int adopt(bkpy_filter *self, bk_filter *f, int kind)
{
    if (self->opened) {
        bk_free(f);
        PyErr_SetString(PyExc_TypeError, "bloomkit: this filter is already open");
        return -1;
    }
    self->f = f;
    self->remote = kind == BKPY_REMOTE;
    self->opened = 1;
    if (kind == BKPY_OWN)
        bk_set_single_writer(f, 1);
    return 0;
}

PyObject *bkpy_wrap(PyTypeObject *type, bk_filter *f, int kind)
{
    PyObject *empty = PyTuple_New(0);
    /* this type's own tp_new, never a subclass's __new__ (which parses a
     * configuration to make a filter of its own) */
    PyObject *o = empty ? filter_tp_new(type, empty, NULL) : NULL;
    Py_XDECREF(empty);
    if (o && !PyObject_TypeCheck(o, &bkpy_filter_type)) {
        Py_DECREF(o);
        o = NULL;
        PyErr_SetString(PyExc_TypeError, "bloomkit: not a Filter type");
    }
    if (!o) {
        bk_free(f);
        return NULL;
    }
    if (adopt((bkpy_filter *)o, f, kind) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    return o;
}

/* Opening: the library call runs without the GIL (files, servers). */
static PyObject *opened(PyTypeObject *cls, int rc, bk_filter *f, const char *what, int kind)
{
    if (rc != BK_OK)
        return bkpy_error_detail(rc, what);
    return bkpy_wrap(cls, f, kind);
}

static PyObject *filter_new_from(PyObject *cls, PyObject *cfg)
{
    if (!PyObject_TypeCheck(cfg, &bkpy_config_type)) {
        PyErr_SetString(PyExc_TypeError, "bloomkit: _new takes a Config");
        return NULL;
    }
    bk_config c = ((bkpy_config *)cfg)->c;
    bk_filter *f = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS /* a large filter's pages are zeroed here */
    rc = bk_new(&c, &f);
    Py_END_ALLOW_THREADS
    if (rc != BK_OK)
        return bkpy_error(rc, "BloomFilter", NULL);
    return bkpy_wrap((PyTypeObject *)cls, f, BKPY_OWN);
}

static PyObject *filter_load(PyObject *cls, PyObject *arg)
{
    PyObject *path;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    bk_filter *f = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_load(PyBytes_AS_STRING(path), &f);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != BK_OK)
        return bkpy_error_path(rc, "load", arg);
    return bkpy_wrap((PyTypeObject *)cls, f, BKPY_OWN);
}

static PyObject *filter_from_bytes(PyObject *cls, PyObject *data)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    bk_filter *f = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS /* the exporter is locked against resizing meanwhile */
    rc = bk_load_buffer(view.buf, (size_t)view.len, &f);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return opened((PyTypeObject *)cls, rc, f, "from_bytes", BKPY_OWN);
}

static PyObject *filter_open_mmap(PyObject *cls, PyObject *args)
{
    PyObject *path, *name;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "O&IU:_open_mmap", PyUnicode_FSConverter, &path, &flags, &name))
        return NULL;
    bk_filter *f = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_open_mmap(PyBytes_AS_STRING(path), flags, &f);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != BK_OK)
        return bkpy_error_path(rc, "open_mmap", name);
    return bkpy_wrap((PyTypeObject *)cls, f, BKPY_MAPPED);
}

/* The file at path mapped for writing, made from cfg when absent, the
 * writer's lock held (not waited for) until close. */
static PyObject *filter_open_path(PyObject *cls, PyObject *args)
{
    PyObject *path, *cfg;
    if (!PyArg_ParseTuple(args, "O&O!:_open_path", PyUnicode_FSConverter, &path, &bkpy_config_type,
                          &cfg))
        return NULL;
    const char *p = PyBytes_AS_STRING(path);
    bk_config c = ((bkpy_config *)cfg)->c;
    bk_file_lock *lock = NULL;
    bk_filter *f = NULL;
    const char *what = "lock";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_lock_file(p, BK_LOCK_NOWAIT, &lock);
    struct stat st;
    if (rc == BK_OK && stat(p, &st) != 0 && errno == ENOENT) {
        what = "create";
        rc = bk_new(&c, &f);
        if (rc == BK_OK)
            rc = bk_save(f, p);
        bk_free(f);
        f = NULL;
    }
    if (rc == BK_OK) {
        what = "open";
        rc = bk_open_mmap(p, BK_MAP_WRITE, &f);
    }
    if (rc != BK_OK)
        bk_unlock_file(lock);
    Py_END_ALLOW_THREADS
    PyObject *out = NULL;
    if (rc != BK_OK)
        bkpy_error_path(rc, what, path);
    else if ((out = bkpy_wrap((PyTypeObject *)cls, f, BKPY_MAPPED)) != NULL)
        ((bkpy_filter *)out)->lock = lock;
    else
        bk_unlock_file(lock);
    Py_DECREF(path);
    return out;
}

#ifndef BKPY_NO_REDIS
/* _redis(url, text, as_default=False): bk_redis_open_config, or with
 * as_default bk_redis_open_default of text over the defaults (an existing
 * filter adopted as it is). */
static PyObject *filter_redis(PyObject *cls, PyObject *args)
{
    const char *url, *text;
    int as_default = 0;
    if (!PyArg_ParseTuple(args, "sz|p:_redis", &url, &text, &as_default))
        return NULL;
    char err[512] = "";
    bk_filter *f = NULL;
    bk_config cfg;
    int rc = BK_OK;
    if (as_default && bk_config_parse(&cfg, text ? text : "", err, sizeof err) != BK_OK)
        return bkpy_error(BK_ECONFIG, "redis", err);
    Py_BEGIN_ALLOW_THREADS
    rc = as_default ? bk_redis_open_default(url, &cfg, &f)
                    : bk_redis_open_config(url, text, err, sizeof err, &f);
    Py_END_ALLOW_THREADS
    if (rc != BK_OK)
        return err[0] ? bkpy_error(rc, "redis", err) : bkpy_error_detail(rc, "redis");
    return bkpy_wrap((PyTypeObject *)cls, f, BKPY_REMOTE);
}

static PyObject *filter_pull(PyObject *cls, PyObject *args)
{
    const char *url;
    if (!PyArg_ParseTuple(args, "s:pull", &url))
        return NULL;
    bk_filter *f = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_redis_pull(url, &f);
    Py_END_ALLOW_THREADS
    return opened((PyTypeObject *)cls, rc, f, "pull", BKPY_OWN);
}

static PyObject *filter_drop(PyObject *cls, PyObject *args)
{
    (void)cls;
    const char *url;
    if (!PyArg_ParseTuple(args, "s:drop", &url))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_redis_drop(url);
    Py_END_ALLOW_THREADS
    if (rc != BK_OK)
        return bkpy_error_detail(rc, "drop");
    Py_RETURN_NONE;
}
/* The import's progress, on the importing thread (GIL released): the
 * Python callable, and Ctrl-C; an exception stops the import. */
static int import_tick(uint64_t done, uint64_t total, void *arg)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() != 0;
    if (!stop && arg) {
        PyObject *r = PyObject_CallFunction((PyObject *)arg, "KK", (unsigned long long)done,
                                            (unsigned long long)total);
        stop = r == NULL;
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
    return stop;
}

/* _import_set(url, set_key, config or None, progress or None)
 * -> (members, added, kept): bk_redis_import_set. */
static PyObject *filter_import_set(PyObject *cls, PyObject *args)
{
    (void)cls;
    const char *url, *set_key, *config;
    PyObject *progress;
    if (!PyArg_ParseTuple(args, "sszO:import_set", &url, &set_key, &config, &progress))
        return NULL;
    if (progress != Py_None && !PyCallable_Check(progress)) {
        PyErr_SetString(PyExc_TypeError, "import_set: progress must be callable or None");
        return NULL;
    }
    bk_redis_import_stats st;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_redis_import_set(url, set_key, config, import_tick,
                             progress == Py_None ? NULL : progress, &st);
    Py_END_ALLOW_THREADS
    if (PyErr_Occurred()) /* the progress callable's, or KeyboardInterrupt */
        return NULL;
    if (rc != BK_OK)
        return bkpy_error_detail(rc, "import_set");
    return Py_BuildValue("KKs", (unsigned long long)st.members, (unsigned long long)st.added,
                         st.kept);
}
/* _key_type(url, key) -> (type, size): bk_redis_key_type. */
static PyObject *filter_key_type(PyObject *cls, PyObject *args)
{
    (void)cls;
    const char *url, *key;
    if (!PyArg_ParseTuple(args, "ss:key_type", &url, &key))
        return NULL;
    char type[64];
    uint64_t size;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_redis_key_type(url, key, type, sizeof type, &size);
    Py_END_ALLOW_THREADS
    if (rc != BK_OK)
        return bkpy_error_detail(rc, "key_type");
    return Py_BuildValue("sK", type, (unsigned long long)size);
}
#else
static PyObject *no_redis(void)
{
    PyErr_SetString(PyExc_ImportError,
                    "bloomkit: this build has no Redis support (hiredis was missing when it was "
                    "built: install libhiredis-dev and reinstall)");
    return NULL;
}
static PyObject *filter_redis(PyObject *cls, PyObject *args)
{
    (void)cls, (void)args;
    return no_redis();
}
#define filter_pull       filter_redis
#define filter_drop       filter_redis
#define filter_import_set filter_redis
#define filter_key_type   filter_redis
#endif

/* ---- one key --------------------------------------------------------------- */

enum { OP_ADD, OP_CONTAINS, OP_REMOVE };

static int key_call(bk_filter *f, int op, const void *p, size_t n)
{
    return op == OP_ADD        ? bk_add(f, p, n)
           : op == OP_CONTAINS ? bk_contains(f, p, n)
                               : bk_remove(f, p, n);
}

/* When a writer is running or waiting, or the filter is a Redis one. */
static int key_slow(bkpy_filter *self, int op, const void *p, size_t n)
{
    int rc;
    if (!self->remote) {
        bkpy_lock_reader(self); /* the GIL is held again: the key stays valid */
        rc = self->f ? key_call(self->f, op, p, n) : BKPY_CLOSED;
        bkpy_unlock_reader(self);
        return rc;
    }
    void *copy = PyMem_Malloc(n ? n : 1); /* the caller's buffer may change without the GIL */
    if (!copy) {
        PyErr_NoMemory();
        return BKPY_CLOSED - 1;
    }
    memcpy(copy, p, n);
    bkpy_lock_writer(self);
    bk_filter *f = self->f;
    Py_BEGIN_ALLOW_THREADS
    rc = f ? key_call(f, op, copy, n) : BKPY_CLOSED;
    Py_END_ALLOW_THREADS
    bkpy_unlock_writer(self);
    PyMem_Free(copy);
    return rc;
}

static inline int key_op(bkpy_filter *self, int op, PyObject *key)
{
    const void *p;
    size_t n;
    PyObject *hold;
    if (bkpy_key(key, &p, &n, &hold) < 0)
        return BKPY_CLOSED - 1;
    int rc;
    if (!self->exclusive && !self->remote)
        rc = self->f ? key_call(self->f, op, p, n) : BKPY_CLOSED;
    else
        rc = key_slow(self, op, p, n);
    Py_XDECREF(hold);
    return rc;
}

/* The exception for rc < 0 of a call on self (BKPY_CLOSED - 1: one is set). */
static PyObject *call_error(bkpy_filter *self, int rc, const char *what)
{
    if (rc == BKPY_CLOSED - 1)
        return NULL;
    if (rc == BKPY_CLOSED)
        return bkpy_closed();
    /* the detail of a remote store, and of a ceiling (it names the limit) */
    if (self->remote || rc == BK_EFULL)
        return bkpy_error_detail(rc, what);
    return bkpy_error(rc, what, NULL);
}

static PyObject *filter_add(bkpy_filter *self, PyObject *key)
{
    const int rc = key_op(self, OP_ADD, key);
    if (rc < 0)
        return call_error(self, rc, "add");
    return PyBool_FromLong(rc);
}

static int filter_sq_contains(bkpy_filter *self, PyObject *key)
{
    const int rc = key_op(self, OP_CONTAINS, key);
    if (rc < 0) {
        call_error(self, rc, "contains");
        return -1;
    }
    return rc;
}

static PyObject *filter_contains(bkpy_filter *self, PyObject *key)
{
    const int rc = filter_sq_contains(self, key);
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *filter_remove(bkpy_filter *self, PyObject *key)
{
    const int rc = key_op(self, OP_REMOVE, key);
    if (rc >= 0)
        Py_RETURN_NONE;
    if (rc <= BKPY_CLOSED)
        return call_error(self, rc, "remove");
    PyObject *what = PyUnicode_FromFormat("remove %R", key);
    if (what) { /* which variants can, when this one cannot */
        if (self->remote || rc == BK_ENOTSUP)
            bkpy_error_detail(rc, PyUnicode_AsUTF8(what));
        else
            bkpy_error(rc, PyUnicode_AsUTF8(what), NULL);
        Py_DECREF(what);
    }
    return NULL;
}

/* ---- calls on the whole filter ---------------------------------------------- */

/* fn(f, arg) under the write lock, the GIL released; the error of rc < 0
 * with the library's detail (detail 0: its text for the code). */
static int whole(bkpy_filter *self, int (*fn)(bk_filter *, void *), void *arg)
{
    bkpy_lock_writer(self);
    bk_filter *f = self->f;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = f ? fn(f, arg) : BKPY_CLOSED;
    Py_END_ALLOW_THREADS
    bkpy_unlock_writer(self);
    return rc;
}

static PyObject *whole_result(bkpy_filter *self, int rc, const char *what, int detail)
{
    if (rc >= 0)
        Py_RETURN_NONE;
    if (rc == BKPY_CLOSED)
        return bkpy_closed();
    return detail || self->remote ? bkpy_error_detail(rc, what) : bkpy_error(rc, what, NULL);
}

static int do_clear(bk_filter *f, void *arg)
{
    (void)arg;
    return bk_clear(f);
}
static int do_sync(bk_filter *f, void *arg)
{
    (void)arg;
    return bk_sync(f);
}
static int do_expire(bk_filter *f, void *arg)
{
    (void)arg;
    return bk_expire(f);
}
static int do_save(bk_filter *f, void *arg)
{
    return bk_save(f, (const char *)arg);
}

static int do_add_once(bk_filter *f, void *arg)
{
    return bk_set_add_once(f, *(const int *)arg);
}

static PyObject *filter_set_add_once(bkpy_filter *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    return whole_result(self, whole(self, do_add_once, &on), "set_add_once", 1);
}

static PyObject *filter_clear(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    return whole_result(self, whole(self, do_clear, NULL), "clear", 0);
}

static PyObject *filter_sync(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    return whole_result(self, whole(self, do_sync, NULL), "sync", 1);
}

static PyObject *filter_expire(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    const int rc = whole(self, do_expire, NULL);
    if (rc < 0)
        return whole_result(self, rc, "expire", 1);
    return PyBool_FromLong(rc);
}

static PyObject *filter_save(bkpy_filter *self, PyObject *arg)
{
    PyObject *path;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    const int rc = whole(self, do_save, PyBytes_AS_STRING(path));
    Py_DECREF(path);
    if (rc >= 0 || rc == BKPY_CLOSED)
        return whole_result(self, rc, "save", 1);
    return bkpy_error_path(rc, "save", arg);
}

#ifndef BKPY_NO_REDIS
static int do_push(bk_filter *f, void *arg)
{
    return bk_redis_push(f, (const char *)arg);
}
#endif

static PyObject *filter_push(bkpy_filter *self, PyObject *args)
{
    const char *url;
    if (!PyArg_ParseTuple(args, "s:push", &url))
        return NULL;
#ifndef BKPY_NO_REDIS
    return whole_result(self, whole(self, do_push, (void *)url), "push", 1);
#else
    (void)self;
    return no_redis();
#endif
}

static PyObject *filter_close(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    bkpy_lock_writer(self);
    bk_filter *f = self->f;
    self->f = NULL;
    int rc = BK_OK;
    if (f) {
        Py_BEGIN_ALLOW_THREADS /* a mapping's last sync */
        rc = bk_close(f);
        Py_END_ALLOW_THREADS
    }
    bk_file_lock *lock = self->lock;
    self->lock = NULL;
    bkpy_unlock_writer(self);
    bk_unlock_file(lock);
    if (rc != BK_OK)
        return bkpy_error_detail(rc, "close");
    Py_RETURN_NONE;
}

static PyObject *filter_stats(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    bk_filter_stats st;
    memset(&st, 0, sizeof st);
    int rc;
    if (!self->exclusive && !self->remote) { /* local figures: no I/O */
        rc = self->f ? bk_stats(self->f, &st) : BKPY_CLOSED;
    } else {
        bkpy_lock_writer(self);
        bk_filter *f = self->f;
        Py_BEGIN_ALLOW_THREADS /* a Redis filter re-reads its counts */
        rc = f ? bk_stats(f, &st) : BKPY_CLOSED;
        Py_END_ALLOW_THREADS
        bkpy_unlock_writer(self);
    }
    bk_config cfg;
    if (rc >= 0) {
        bkpy_lock_reader(self);
        rc = self->f ? bk_get_config(self->f, &cfg) : BKPY_CLOSED;
        bkpy_unlock_reader(self);
    }
    if (rc < 0)
        return call_error(self, rc, "stats");
    return bkpy_figures_dict(&st, &cfg);
}

static PyObject *filter_get_config(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    bk_config c;
    /* thread-safe, no I/O (a Redis filter's configuration is kept locally);
     * self->f changes only under the write lock, so read it under a reader */
    bkpy_lock_reader(self);
    const int rc = self->f ? bk_get_config(self->f, &c) : BKPY_CLOSED;
    bkpy_unlock_reader(self);
    if (rc < 0)
        return call_error(self, rc, "config");
    return bkpy_config_new(&c);
}

static PyObject *filter_to_bytes(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    if (self->remote) {
        PyErr_SetString(PyExc_TypeError,
                        "bloomkit: a shared (Redis) filter has no bytes here; pull it");
        return NULL;
    }
    bkpy_lock_writer(self); /* no add can grow it between sizing and writing */
    PyObject *out = NULL;
    uint64_t size = 0;
    size_t len = 0;
    int rc = self->f ? bk_save_size(self->f, &size) : BKPY_CLOSED;
    if (rc == BK_OK && size > (uint64_t)PY_SSIZE_T_MAX)
        rc = BK_ERANGE;
    if (rc == BK_OK && (out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size)) != NULL) {
        bk_filter *f = self->f;
        char *buf = PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        rc = bk_save_buffer(f, buf, (size_t)size, &len);
        Py_END_ALLOW_THREADS
    }
    bkpy_unlock_writer(self);
    if (rc < 0) {
        Py_XDECREF(out);
        return rc == BKPY_CLOSED ? bkpy_closed() : bkpy_error_detail(rc, "to_bytes");
    }
    if (out && (size_t)PyBytes_GET_SIZE(out) != len && _PyBytes_Resize(&out, (Py_ssize_t)len) < 0)
        return NULL;
    return out;
}

static PyObject *filter_copy(bkpy_filter *self, PyObject *unused)
{
    (void)unused;
    if (self->remote) {
        PyErr_SetString(PyExc_TypeError,
                        "bloomkit: a shared (Redis) filter cannot be copied; pull it");
        return NULL;
    }
    bkpy_lock_writer(self);
    bk_filter *f = self->f, *copy = NULL;
    int rc = BKPY_CLOSED;
    if (f) {
        Py_BEGIN_ALLOW_THREADS
        rc = bk_copy(f, &copy);
        Py_END_ALLOW_THREADS
    }
    bkpy_unlock_writer(self);
    if (rc < 0)
        return rc == BKPY_CLOSED ? bkpy_closed() : bkpy_error_detail(rc, "copy");
    return bkpy_wrap(Py_TYPE(self), copy, BKPY_OWN);
}

/* ---- two filters ------------------------------------------------------------- */

/* Both under the write lock (one lock when a is b), taken in address order
 * so that a.merge(b) and b.merge(a) at once cannot deadlock. */
static void lock_pair(bkpy_filter *a, bkpy_filter *b)
{
    bkpy_filter *first = a < b ? a : b, *second = a < b ? b : a;
    bkpy_lock_writer(first);
    if (second != first)
        bkpy_lock_writer(second);
}

static void unlock_pair(bkpy_filter *a, bkpy_filter *b)
{
    bkpy_unlock_writer(a);
    if (b != a)
        bkpy_unlock_writer(b);
}

static int pair_call(bkpy_filter *a, bkpy_filter *b, int (*fn)(bk_filter *, const bk_filter *))
{
    lock_pair(a, b);
    bk_filter *fa = a->f, *fb = b->f;
    int rc = BKPY_CLOSED;
    if (fa && fb) {
        Py_BEGIN_ALLOW_THREADS
        rc = fn(fa, fb);
        Py_END_ALLOW_THREADS
    }
    unlock_pair(a, b);
    return rc;
}

static PyObject *combine(bkpy_filter *self, PyObject *other,
                         int (*fn)(bk_filter *, const bk_filter *), const char *what)
{
    if (!PyObject_TypeCheck(other, &bkpy_filter_type)) {
        PyErr_Format(PyExc_TypeError, "bloomkit: %s takes a BloomFilter", what);
        return NULL;
    }
    const int rc = pair_call(self, (bkpy_filter *)other, fn);
    if (rc == BKPY_CLOSED)
        return bkpy_closed();
    if (rc < 0)
        return bkpy_error_detail(rc, what);
    Py_RETURN_NONE;
}

static PyObject *filter_merge(bkpy_filter *self, PyObject *other)
{
    return combine(self, other, bk_merge, "merge");
}

static PyObject *filter_intersect(bkpy_filter *self, PyObject *other)
{
    return combine(self, other, bk_intersect, "intersect");
}

static int equal_fn(bk_filter *a, const bk_filter *b)
{
    return bk_equal(a, b);
}

static PyObject *filter_richcompare(bkpy_filter *self, PyObject *other, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(other, &bkpy_filter_type))
        Py_RETURN_NOTIMPLEMENTED;
    if ((PyObject *)self == other)
        return PyBool_FromLong(op == Py_EQ);
    if (self->remote || ((bkpy_filter *)other)->remote)
        Py_RETURN_NOTIMPLEMENTED; /* shared filters: identity, as objects */
    const int rc = pair_call(self, (bkpy_filter *)other, equal_fn);
    if (rc == BKPY_CLOSED)
        return bkpy_closed();
    if (rc < 0)
        return bkpy_error_detail(rc, "==");
    return PyBool_FromLong(op == Py_EQ ? rc == 1 : rc == 0);
}

/* ---- attributes ------------------------------------------------------------------ */

static PyObject *filter_get_closed(bkpy_filter *self, void *unused)
{
    (void)unused;
    /* under the GIL: close() clears f under the write lock, and this reads
     * it only when no writer is running (exclusive == 0) */
    if (self->exclusive)
        return PyBool_FromLong(0);
    return PyBool_FromLong(self->f == NULL);
}

static PyObject *filter_get_remote(bkpy_filter *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->remote);
}

static PyGetSetDef filter_getset[] = {
    {"closed", (getter)filter_get_closed, NULL, "True once close() has run.", NULL},
    {"is_shared", (getter)filter_get_remote, NULL, "True for a filter in Redis.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define M(name, fn, flags, doc)                                                                    \
    {                                                                                              \
        name, (PyCFunction)(void (*)(void))fn, flags, doc                                          \
    }

static PyMethodDef filter_methods[] = {
    M("add", filter_add, METH_O,
      "add(key) -> bool: add key; True when it was new (not already in "
      "the filter)."),
    M("contains", filter_contains, METH_O, "contains(key) -> bool: same as ``key in filter``."),
    M("remove", filter_remove, METH_O,
      "remove(key): remove one occurrence of key (counting filters only). NotFoundError (a "
      "KeyError) when the filter does not hold it, UnsupportedError (a TypeError) for the other "
      "variants."),
    M("update", bkpy_update, METH_O,
      "update(keys): add every key of an iterable (any, generators too), in batches with the GIL "
      "released. Returns None, as set.update."),
    M("add_many", bkpy_add_many, METH_O,
      "add_many(keys) -> list[bool]: add every key in order, in batches with the GIL released; "
      "for each, True when it was new. A key repeated in keys is new only the first time."),
    M("contains_many", bkpy_contains_many, METH_O,
      "contains_many(keys) -> list[bool]: [key in self for key in keys], in batches."),
    M("remove_many", bkpy_remove_many, METH_O,
      "remove_many(keys) -> list[bool]: remove one occurrence of each key (counting filters); for "
      "each, True when it was removed, False when the filter did not hold it (nothing changed for "
      "that key)."),
    M("set_add_once", filter_set_add_once, METH_O,
      "set_add_once(on): with True, an add of a key present changes nothing, so a counting or "
      "cuckoo filter holds each key once (for 'first sight?' callers, such as the Scrapy "
      "filter); not for a filter in Redis."),
    M("clear", filter_clear, METH_NOARGS,
      "clear(): empty the filter, keeping its configuration and hash key."),
    M("expire", filter_expire, METH_NOARGS,
      "expire() -> bool: free what the clock has aged out of a window filter now (True when "
      "something was freed); False for the other variants."),
    M("stats", filter_stats, METH_NOARGS,
      "stats() -> dict: the filter's figures: variant, hash, capacity, fpr, bits, bytes, k, keys "
      "(adds that were new; counting: minus removes), set_bits, fill, est_cardinality, est_fpr, "
      "slices, saturated, model_fpr, and for a window redated_from_ms and redated_to_ms (0 "
      "unless its generations were found in this clock's future and moved back: "
      "docs/windows.md)."),
    M("_config", filter_get_config, METH_NOARGS, "The configuration, as a Config."),
    M("save", filter_save, METH_O,
      "save(path): write the filter to path atomically (a crash leaves the old file or the new "
      "one, never a mix); mode 0600. OSError (FilterIOError) on failure."),
    M("to_bytes", filter_to_bytes, METH_NOARGS,
      "to_bytes() -> bytes: the filter in the file format, the bytes save() writes "
      "(from_bytes() reads them back). A shared (Redis) filter: TypeError (pull it first)."),
    M("sync", filter_sync, METH_NOARGS,
      "sync(): flush a filter mapped for writing (open_mmap(writable=True), path=)."),
    M("close", filter_close, METH_NOARGS,
      "close(): free the filter (a writable mapping is synced, then unmapped, and its file "
      "lock released; a Redis one disconnects and leaves its data on the server). Idempotent. "
      "OSError when the final sync of a writable mapping fails (the filter is freed all the "
      "same). A call another thread is making finishes first."),
    M("copy", filter_copy, METH_NOARGS,
      "copy() -> BloomFilter: a new in-memory filter equal to this one (cells, counts, hash key). "
      "A shared (Redis) filter: TypeError (pull it)."),
    M("merge", filter_merge, METH_O,
      "merge(other): add every key of other (the union), in place. Both must have the same "
      "variant, size, hash and key: IncompatibleError (a ValueError) naming what differs."),
    M("intersect", filter_intersect, METH_O,
      "intersect(other): keep only the bits other has too, in place (standard filters with the "
      "same size, hash and key): a key added to both stays present."),
    M("push", filter_push, METH_VARARGS,
      "push(url): copy this filter into Redis at url, as a new shared filter (the name must not "
      "exist): the same configuration, hash key, cells and counts."),
    M("_new", filter_new_from, METH_O | METH_CLASS, "A new filter from a Config."),
    M("_load", filter_load, METH_O | METH_CLASS, "A filter file read into memory."),
    M("_from_bytes", filter_from_bytes, METH_O | METH_CLASS, "A filter from its file format."),
    M("_open_mmap", filter_open_mmap, METH_VARARGS | METH_CLASS, "A filter file mapped."),
    M("_open_path", filter_open_path, METH_VARARGS | METH_CLASS,
      "A filter file mapped for writing, created when absent, its writer's lock held."),
    M("_redis", filter_redis, METH_VARARGS | METH_CLASS, "A shared filter in Redis."),
    M("_pull", filter_pull, METH_VARARGS | METH_CLASS, "A local copy of a shared filter."),
    M("_drop", filter_drop, METH_VARARGS | METH_CLASS, "Delete a shared filter."),
    M("_import_set", filter_import_set, METH_VARARGS | METH_CLASS,
      "Import a Redis set's members into a shared filter."),
    M("_key_type", filter_key_type, METH_VARARGS | METH_CLASS,
      "What a Redis key holds: (type, size)."),
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods filter_as_sequence = {
    .sq_contains = (objobjproc)filter_sq_contains,
};

PyTypeObject bkpy_filter_type = {
    /* the macro ends in a comma of its own */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bloomkit._native.Filter",
    /* clang-format on */
    .tp_doc = "A bloomkit filter handle (bloomkit.BloomFilter is the class to use).",
    .tp_basicsize = sizeof(bkpy_filter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = filter_tp_new,
    .tp_dealloc = (destructor)filter_dealloc,
    .tp_methods = filter_methods,
    .tp_getset = filter_getset,
    .tp_as_sequence = &filter_as_sequence,
    .tp_richcompare = (richcmpfunc)filter_richcompare,
    .tp_weaklistoffset = offsetof(bkpy_filter, weakrefs),
};
