/*
 * py_batch.c - many keys per library call: update, add_many, contains_many,
 * remove_many. Keys are gathered a chunk at a time with the GIL held (each
 * one referenced, or its buffer exported, so no other thread can free or
 * resize it), then handed to the library with the GIL released and the
 * filter's lock held (for reading by lookups, for writing by adds and
 * removes: bkpy.h). Large chunks of adds and lookups go to a pool of worker
 * threads shared by every filter (bk_add_batch_mt).
 */
#include "bkpy.h"

#include <unistd.h>

/* Keys per library call: bounds the scratch arrays (about 0.5 MiB). */
#define CHUNK 16384
/* A chunk this large goes to the worker pool, when there is one. */
#define MT_MIN 2048

/* ---- the worker pool --------------------------------------------------------- */

static bk_workers *pool;
static pid_t pool_pid;      /* a pool's threads do not survive fork() */
static unsigned pool_want;  /* set_threads: 0 = one per CPU */
static unsigned pool_users; /* batch calls lent the pool (under the GIL) */

/* The pool for a chunk of n keys, or NULL (the caller's thread alone). */
static bk_workers *pool_get(size_t n)
{
    if (n < MT_MIN)
        return NULL;
    if (pool && pool_pid != getpid())
        pool = NULL; /* a forked child: the parent's threads are not here (leaked, not joined) */
    if (!pool) {
        const unsigned want = pool_want ? pool_want : bk_workers_cpus();
        if (want < 2 || bk_workers_new(want > 8 ? 8 : want, &pool) != BK_OK) {
            pool = NULL;
            return NULL; /* no threads to be had: one is enough */
        }
        pool_pid = getpid();
    }
    pool_users++;
    return pool;
}

static void pool_put(bk_workers *w)
{
    if (w)
        pool_users--;
}

PyObject *bkpy_set_threads(PyObject *module, PyObject *arg)
{
    (void)module;
    const long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0 || n > BK_WORKERS_MAX) {
        PyErr_Format(PyExc_ValueError, "bloomkit: set_threads takes 0 (one per CPU) to %d, not %ld",
                     BK_WORKERS_MAX, n);
        return NULL;
    }
    if (pool_users) {
        PyErr_SetString(PyExc_RuntimeError,
                        "bloomkit: set_threads while a batch call is using the threads");
        return NULL;
    }
    if (pool && pool_pid == getpid()) {
        bk_workers *w = pool;
        pool = NULL;
        Py_BEGIN_ALLOW_THREADS
        bk_workers_free(w);
        Py_END_ALLOW_THREADS
    }
    pool = NULL;
    pool_want = (unsigned)n;
    Py_RETURN_NONE;
}

PyObject *bkpy_get_threads(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    const unsigned want = pool_want ? pool_want : bk_workers_cpus();
    return PyLong_FromUnsignedLong(want > 8 ? 8 : want);
}

/* ---- a chunk of keys ------------------------------------------------------------- */

typedef struct {
    const void **keys;
    size_t *lens;
    int *res;
    PyObject **refs;  /* a reference to each key (or to its bytes copy) */
    Py_buffer *views; /* exported buffers (bytearray, memoryview), made on demand */
    size_t n, nviews;
} chunk;

static int chunk_init(chunk *c)
{
    memset(c, 0, sizeof *c);
    c->keys = PyMem_Malloc(CHUNK * sizeof *c->keys);
    c->lens = PyMem_Malloc(CHUNK * sizeof *c->lens);
    c->res = PyMem_Malloc(CHUNK * sizeof *c->res);
    c->refs = PyMem_Malloc(CHUNK * sizeof *c->refs);
    if (!c->keys || !c->lens || !c->res || !c->refs) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Let go of the chunk's keys (with the GIL). */
static void chunk_release(chunk *c)
{
    for (size_t i = 0; i < c->nviews; i++)
        PyBuffer_Release(&c->views[i]);
    for (size_t i = 0; i < c->n; i++)
        Py_DECREF(c->refs[i]);
    c->n = c->nviews = 0;
}

static void chunk_free(chunk *c)
{
    chunk_release(c);
    PyMem_Free(c->keys);
    PyMem_Free(c->lens);
    PyMem_Free(c->res);
    PyMem_Free(c->refs);
    PyMem_Free(c->views);
}

/* Append one key: 0, or -1 with an exception set. */
static int chunk_push(chunk *c, PyObject *key)
{
    const size_t i = c->n;
    if (PyBytes_Check(key)) {
        c->keys[i] = PyBytes_AS_STRING(key);
        c->lens[i] = (size_t)PyBytes_GET_SIZE(key);
    } else if (PyUnicode_Check(key)) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(key, &len); /* kept in the str */
        if (!s)
            return -1;
        c->keys[i] = s;
        c->lens[i] = (size_t)len;
    } else if (PyByteArray_Check(key) || PyMemoryView_Check(key)) {
        if (!c->views && !(c->views = PyMem_Malloc(CHUNK * sizeof *c->views))) {
            PyErr_NoMemory();
            return -1;
        }
        Py_buffer *v = &c->views[c->nviews];
        if (PyObject_GetBuffer(key, v, PyBUF_SIMPLE) == 0) {
            c->nviews++; /* a bytearray cannot resize while exported */
            c->keys[i] = v->buf;
            c->lens[i] = (size_t)v->len;
        } else {
            if (!PyErr_ExceptionMatches(PyExc_BufferError))
                return -1;
            PyErr_Clear(); /* a memoryview that is not contiguous: its bytes */
            PyObject *copy = PyBytes_FromObject(key);
            if (!copy)
                return -1;
            c->keys[i] = PyBytes_AS_STRING(copy);
            c->lens[i] = (size_t)PyBytes_GET_SIZE(copy);
            c->refs[c->n++] = copy;
            return 0;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "bloomkit: a key is bytes or str, not %.100s",
                     Py_TYPE(key)->tp_name);
        return -1;
    }
    Py_INCREF(key);
    c->refs[c->n++] = key;
    return 0;
}

/* ---- the calls ---------------------------------------------------------------------- */

enum { B_ADD, B_CONTAINS, B_REMOVE };

/* The library call on a chunk, the GIL released; BKPY_CLOSED when closed. */
static int chunk_call(bkpy_filter *self, int op, chunk *c)
{
    int rc;
    /* adds and removes one call at a time (and no one-key add beside them):
     * the library's lock-free adds let two threads adding one key at once
     * both be told "not new" when other keys set its last bits meanwhile;
     * in turns, exactly one is told "new". Lookups run together. */
    const int writer = self->remote || op != B_CONTAINS;
    if (writer)
        bkpy_lock_writer(self);
    else
        bkpy_lock_reader(self);
    bk_filter *f = self->f;
    bk_workers *w = f && op != B_REMOVE ? pool_get(c->n) : NULL;
    Py_BEGIN_ALLOW_THREADS
    if (!f) {
        rc = BKPY_CLOSED;
    } else if (op == B_ADD) {
        rc = bk_add_batch_mt(f, w, c->keys, c->lens, c->n, c->res);
    } else if (op == B_CONTAINS) {
        rc = bk_contains_batch_mt(f, w, c->keys, c->lens, c->n, c->res);
    } else {
        rc = BK_OK; /* no batch call: one at a time, each answer kept */
        for (size_t i = 0; i < c->n; i++) {
            const int r = bk_remove(f, c->keys[i], c->lens[i]);
            if (r < 0 && r != BK_ENOTFOUND) {
                rc = r;
                break;
            }
            c->res[i] = r == BK_OK;
        }
    }
    Py_END_ALLOW_THREADS
    pool_put(w);
    if (writer)
        bkpy_unlock_writer(self);
    else
        bkpy_unlock_reader(self);
    return rc;
}

/* Store n answers at out[*filled ...]: in the slots made for them, or
 * appended past its end. */
static int put_results(PyObject *out, Py_ssize_t *filled, const int *res, size_t n)
{
    Py_ssize_t room = PyList_GET_SIZE(out) - *filled;
    if (room < (Py_ssize_t)n) { /* more keys than the list was made for */
        PyObject *more = PyList_New((Py_ssize_t)n - room);
        if (!more)
            return -1;
        const int rc = PyList_SetSlice(out, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, more);
        Py_DECREF(more);
        if (rc < 0)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        PyObject *b = res[i] == 1 ? Py_True : Py_False;
        Py_INCREF(b);
        PyList_SET_ITEM(out, *filled + (Py_ssize_t)i, b); /* the slots hold NULL */
    }
    *filled += (Py_ssize_t)n;
    return 0;
}

static const char *const op_name[] = {"add_many", "contains_many", "remove_many"};

/* Every key of `keys` through op; results appended to *out when out is not
 * NULL. Returns 0, or -1 with an exception set.
 * long: one loop over a sequence or an iterator, chunk by chunk, and its cleanup. */
static int run(bkpy_filter *self, int op, PyObject *keys, const char *what, PyObject *out)
{
    if (PyUnicode_Check(keys) || PyBytes_Check(keys) || PyByteArray_Check(keys)) {
        /* iterating would give characters or ints: surely a mistake */
        PyErr_Format(PyExc_TypeError, "bloomkit: %s takes an iterable of keys, not one %.100s",
                     what, Py_TYPE(keys)->tp_name);
        return -1;
    }
    /* a list or tuple is read in place (its length again after each chunk:
     * another thread may change a list while the GIL is released) */
    const int seq = PyList_CheckExact(keys) || PyTuple_CheckExact(keys);
    PyObject *it = keys;
    if (seq)
        Py_INCREF(it);
    else if (!(it = PyObject_GetIter(keys)))
        return -1;
    Py_ssize_t at = 0, filled = 0;
    /* the answers' list made at its size when the size is known */
    if (out && seq) {
        PyObject *sized = PyList_New(PySequence_Fast_GET_SIZE(keys));
        if (!sized || PyList_SetSlice(out, 0, 0, sized) < 0) {
            Py_XDECREF(sized);
            Py_DECREF(it);
            return -1;
        }
        Py_DECREF(sized);
    }
    chunk c;
    int rc = chunk_init(&c) < 0 ? -1 : 0;
    while (rc == 0) {
        PyObject *key;
        if (seq) {
            const Py_ssize_t len = PySequence_Fast_GET_SIZE(keys);
            PyObject **items = PySequence_Fast_ITEMS(keys);
            while (c.n < CHUNK && at < len) {
                if (at + 8 < len) /* the keys are scattered objects: fetch ahead */
                    __builtin_prefetch(items[at + 8]);
                if (chunk_push(&c, items[at++]) < 0) { /* items[] holds on to them */
                    rc = -1;
                    break;
                }
            }
        } else {
            while (c.n < CHUNK && (key = PyIter_Next(it)) != NULL) {
                const int r = chunk_push(&c, key);
                Py_DECREF(key);
                if (r < 0) {
                    rc = -1;
                    break;
                }
            }
        }
        if (rc < 0 || PyErr_Occurred()) {
            rc = -1;
            break;
        }
        if (c.n == 0)
            break;
        const int lib = chunk_call(self, op, &c);
        if (lib < 0) {
            if (lib == BKPY_CLOSED)
                bkpy_closed();
            else if (self->remote || lib == BK_EFULL || lib == BK_EINVAL)
                bkpy_error_detail(lib, what);
            else
                bkpy_error(lib, what, NULL);
            rc = -1;
            break;
        }
        if (out && put_results(out, &filled, c.res, c.n) < 0) {
            rc = -1;
            break;
        }
        const int full = c.n == CHUNK;
        chunk_release(&c);
        if (!full)
            break;
        if (PyErr_CheckSignals() < 0) { /* Ctrl-C: the chunks before stand */
            rc = -1;
            break;
        }
    }
    chunk_free(&c);
    Py_DECREF(it);
    /* slots never filled (the list of keys shrank meanwhile, or an error) */
    if (out && PyList_GET_SIZE(out) > filled &&
        PyList_SetSlice(out, filled, PY_SSIZE_T_MAX, NULL) < 0)
        rc = -1;
    return rc;
}

PyObject *bkpy_update(bkpy_filter *self, PyObject *keys)
{
    if (run(self, B_ADD, keys, "update", NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *with_results(bkpy_filter *self, int op, PyObject *keys)
{
    PyObject *out = PyList_New(0);
    if (out && run(self, op, keys, op_name[op], out) < 0)
        Py_CLEAR(out);
    return out;
}

PyObject *bkpy_add_many(bkpy_filter *self, PyObject *keys)
{
    return with_results(self, B_ADD, keys);
}

PyObject *bkpy_contains_many(bkpy_filter *self, PyObject *keys)
{
    return with_results(self, B_CONTAINS, keys);
}

PyObject *bkpy_remove_many(bkpy_filter *self, PyObject *keys)
{
    return with_results(self, B_REMOVE, keys);
}
