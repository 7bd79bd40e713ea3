/*
 * py_module.c - bloomkit._native: the types, the library's version and error
 * texts, URL canonicalisation, the worker threads' setting, the window's
 * clock for tests and simulations.
 */
#include "bkpy.h" /* first: Python.h sets the feature macros */

#include <stdatomic.h>

static PyObject *m_version(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyUnicode_FromString(bk_version());
}

/* fn(code) as a str, for a Python int code (any int: one outside the
 * library's range is a code it does not know). */
static PyObject *code_text(PyObject *arg, const char *(*fn)(int))
{
    const long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(fn(code < INT_MIN || code > INT_MAX ? INT_MIN : (int)code));
}

static PyObject *m_strerror(PyObject *m, PyObject *arg)
{
    (void)m;
    return code_text(arg, bk_strerror);
}

static PyObject *m_err_name(PyObject *m, PyObject *arg)
{
    (void)m;
    return code_text(arg, bk_err_name);
}

/* canonical_url(raw: bytes-like, flags) -> bytes */
static PyObject *m_canonical_url(PyObject *m, PyObject *args)
{
    (void)m;
    Py_buffer in;
    unsigned flags;
    if (!PyArg_ParseTuple(args, "y*I:canonical_url", &in, &flags))
        return NULL;
    const size_t len = (size_t)in.len;
    if (len > ((size_t)PY_SSIZE_T_MAX - 1) / 3) {
        PyBuffer_Release(&in);
        return PyErr_NoMemory();
    }
    const size_t cap = 3 * len + 1; /* BK_URL_CANONICAL_MAX */
    char *out = PyMem_Malloc(cap);
    if (!out) {
        PyBuffer_Release(&in);
        return PyErr_NoMemory();
    }
    size_t n = 0;
    const int rc = bk_url_canonical(in.buf, len, flags, out, cap, &n);
    PyBuffer_Release(&in);
    PyObject *res = rc < 0 ? bkpy_error(rc, "canonical_url", NULL)
                           : PyBytes_FromStringAndSize(out, (Py_ssize_t)n);
    PyMem_Free(out);
    return res;
}

/* set_clock(ms): the time every window filter of the process reads, fixed
 * at ms since the epoch until the next call; None gives back the system's
 * clock. The time is an atomic, so a batch running on another thread reads
 * either the old or the new one. */
static _Atomic int64_t fixed_now;

static int64_t fixed_clock(void *ctx)
{
    (void)ctx;
    return atomic_load_explicit(&fixed_now, memory_order_relaxed);
}

static PyObject *m_set_clock(PyObject *m, PyObject *arg)
{
    (void)m;
    if (arg == Py_None) {
        bk_set_clock(NULL, NULL);
        Py_RETURN_NONE;
    }
    const long long ms = PyLong_AsLongLong(arg);
    if (ms == -1 && PyErr_Occurred())
        return NULL;
    if (ms < 0) {
        PyErr_SetString(PyExc_ValueError, "set_clock: a time before 1970 (ms < 0)");
        return NULL;
    }
    atomic_store_explicit(&fixed_now, (int64_t)ms, memory_order_relaxed);
    bk_set_clock(fixed_clock, NULL);
    Py_RETURN_NONE;
}

/* The configuration keys variant v takes (bk_config_key_applies), as a
 * list of str; NULL with an exception set. */
static PyObject *keys_of(bk_variant v)
{
    PyObject *keys = PyList_New(0);
    const char *name;
    for (unsigned i = 0; keys && (name = bk_config_key(i, NULL, 0, NULL)); i++) {
        if (!bk_config_key_applies(v, name))
            continue;
        PyObject *k = PyUnicode_FromString(name);
        if (!k || PyList_Append(keys, k) < 0)
            Py_CLEAR(keys);
        Py_XDECREF(k);
    }
    return keys;
}

/* variants() -> [(name, removes, grows, keys), ...]: the library's registry. */
static PyObject *m_variants(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (int v = 0; out && bk_variant_name((bk_variant)v); v++) {
        PyObject *keys = keys_of((bk_variant)v);
        PyObject *row =
            keys ? Py_BuildValue("(sOON)", bk_variant_name((bk_variant)v),
                                 bk_variant_removes((bk_variant)v) ? Py_True : Py_False,
                                 bk_variant_grows((bk_variant)v) ? Py_True : Py_False, keys)
                 : NULL;
        if (!row || PyList_Append(out, row) < 0) {
            Py_XDECREF(row);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(row);
    }
    return out;
}

/* config_preset(name) -> str: bk_config_preset's text; ValueError for an
 * unknown name. */
static PyObject *m_config_preset(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "config_preset: the name is a str");
        return NULL;
    }
    const char *text = bk_config_preset(name);
    if (!text)
        return PyErr_Format(PyExc_ValueError, "config_preset: no preset named %R", arg);
    return PyUnicode_FromString(text);
}

static PyMethodDef module_methods[] = {
    {"variants", m_variants, METH_NOARGS,
     "variants() -> [(name, removes, grows, keys), ...]: the library's variants and the "
     "configuration keys each takes."},
    {"figures", bkpy_figures, METH_NOARGS,
     "figures() -> [(name, type, [variant, ...], meaning), ...]: what stats() reports."},
    {"library_version", m_version, METH_NOARGS, "bk_version() of the library in use."},
    {"config_preset", m_config_preset, METH_O,
     "config_preset(name) -> str: the config text of a named set of defaults (\"crawler\")."},
    {"strerror", m_strerror, METH_O, "bk_strerror(code)."},
    {"err_name", m_err_name, METH_O, "bk_err_name(code): \"BK_EIO\", ..."},
    {"canonical_url", m_canonical_url, METH_VARARGS, "bk_url_canonical(raw, flags) -> bytes."},
    {"config_build", bkpy_config_build, METH_VARARGS,
     "config_build(text, pairs) -> Config: config text, then (key, value) pairs over it, each "
     "key stated once, the whole checked once (bk_config_build)."},
    {"config_text_sets", bkpy_config_text_sets, METH_VARARGS,
     "config_text_sets(text, key) -> bool: the (valid) text states a value for key."},
    {"set_threads", bkpy_set_threads, METH_O,
     "set_threads(n): threads for large batches (0: one per CPU, at most 8; 1: none)."},
    {"get_threads", bkpy_get_threads, METH_NOARGS, "The threads large batches use."},
    {"set_clock", m_set_clock, METH_O,
     "set_clock(ms): window filters read this time (ms since the epoch); None: the system's."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bloomkit._native",
    .m_doc = "The bloomkit C library, for the bloomkit package (use bloomkit, not this).",
    .m_size = -1,
    .m_methods = module_methods,
};

static int add_type(PyObject *m, const char *name, PyTypeObject *t)
{
    if (PyType_Ready(t) < 0)
        return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

/* the one symbol the extension exports (sources are built -fvisibility=hidden) */
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (add_type(m, "Filter", &bkpy_filter_type) < 0 ||
        add_type(m, "Config", &bkpy_config_type) < 0 ||
        add_type(m, "FileLock", &bkpy_lock_type) < 0 || bkpy_errors_init(m) < 0 ||
        /* the release this extension was compiled against (bloomkit.h) */
        PyModule_AddStringConstant(m, "BUILT_VERSION", BK_VERSION_STRING) < 0 ||
        PyModule_AddIntConstant(m, "MAP_WRITE", BK_MAP_WRITE) < 0 ||
        PyModule_AddIntConstant(m, "MAP_NOVERIFY", BK_MAP_NOVERIFY) < 0 ||
        PyModule_AddIntConstant(m, "URL_KEEP_QUERY_ORDER", BK_URL_KEEP_QUERY_ORDER) < 0 ||
#ifdef BKPY_NO_REDIS
        PyModule_AddIntConstant(m, "HAVE_REDIS", 0) < 0
#else
        PyModule_AddIntConstant(m, "HAVE_REDIS", 1) < 0
#endif
    ) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
