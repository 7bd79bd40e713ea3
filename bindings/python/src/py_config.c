/*
 * py_config.c - Config: a struct bk_config as a Python object, so the binding
 * reads, sets, formats and compares configurations with the library's own
 * parser (bloomkit/filter.py builds on it; no key is listed here).
 */
#include "bkpy.h"

#include <stddef.h>

PyObject *bkpy_config_new(const bk_config *c)
{
    bkpy_config *o = PyObject_New(bkpy_config, &bkpy_config_type);
    if (o)
        o->c = *c;
    return (PyObject *)o;
}

static PyObject *config_tp_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if ((args && PyTuple_GET_SIZE(args)) || (kw && PyDict_GET_SIZE(kw))) {
        PyErr_SetString(PyExc_TypeError, "bloomkit: Config() takes no arguments");
        return NULL;
    }
    bkpy_config *o = (bkpy_config *)type->tp_alloc(type, 0);
    if (o)
        bk_config_init(&o->c);
    return (PyObject *)o;
}

/* A str argument as UTF-8 with no NUL (C would read only up to it). */
static const char *text_arg(PyObject *s, const char *what)
{
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "bloomkit: %s is a str, not %.100s", what,
                     Py_TYPE(s)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(s, &n);
    if (p && strlen(p) != (size_t)n) {
        PyErr_Format(PyExc_ValueError, "bloomkit: %s holds a NUL character", what);
        return NULL;
    }
    return p;
}

/* The ConfigError being raised carries the key at fault (NULL: None) and
 * its line (0: None), so callers need not read the message. */
static void set_where(const char *k, unsigned l)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value) {
        /* (Py_INCREF is a statement in Python 3.7) */
        PyObject *key = k ? PyUnicode_FromString(k) : Py_BuildValue("");
        PyObject *line = l ? PyLong_FromUnsignedLong(l) : Py_BuildValue("");
        if (!key || !line || PyObject_SetAttrString(value, "key", key) < 0 ||
            PyObject_SetAttrString(value, "line", line) < 0)
            PyErr_Clear(); /* the exception stands without them */
        Py_XDECREF(key);
        Py_XDECREF(line);
    }
    PyErr_Restore(type, value, tb);
}

static PyObject *config_read(bkpy_config *self, PyObject *text)
{
    const char *t = text_arg(text, "config text");
    if (!t)
        return NULL;
    bk_config_error e;
    memset(&e, 0, sizeof e);
    const int rc = bk_config_read(&self->c, t, &e);
    if (rc == BK_OK)
        Py_RETURN_NONE;
    bkpy_error(rc, "config", e.message[0] ? e.message : NULL);
    if (rc == BK_ECONFIG)
        set_where(e.key[0] ? e.key : NULL, e.line);
    return NULL;
}

static PyObject *config_set(bkpy_config *self, PyObject *args)
{
    PyObject *k, *v;
    if (!PyArg_ParseTuple(args, "UU:set", &k, &v))
        return NULL;
    const char *key = text_arg(k, "a config key"),
               *value = key ? text_arg(v, "a config value") : NULL;
    if (!value)
        return NULL;
    char err[512] = "";
    const int rc = bk_config_set(&self->c, key, value, err, sizeof err);
    if (rc != BK_OK) {
        bkpy_error(rc, "config", err[0] ? err : NULL);
        if (rc == BK_ECONFIG)
            set_where(key, 0);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *config_format(bkpy_config *self, PyObject *args)
{
    int include_key = 0;
    if (!PyArg_ParseTuple(args, "|p:format", &include_key))
        return NULL;
    char buf[1024];
    const int rc = bk_config_format(&self->c, include_key, buf, sizeof buf);
    if (rc < 0)
        return bkpy_error(rc, "config", NULL);
    return PyUnicode_FromString(buf);
}

static PyObject *config_diff(bkpy_config *self, PyObject *have)
{
    if (!PyObject_TypeCheck(have, &bkpy_config_type)) {
        PyErr_SetString(PyExc_TypeError, "bloomkit: diff takes a Config");
        return NULL;
    }
    const char *d = bk_config_diff(&self->c, &((bkpy_config *)have)->c);
    if (!d)
        Py_RETURN_NONE;
    return PyUnicode_FromString(d);
}

static PyObject *config_copy(bkpy_config *self, PyObject *unused)
{
    (void)unused;
    return bkpy_config_new(&self->c);
}

static PyObject *config_forget_key(bkpy_config *self, PyObject *unused)
{
    (void)unused;
    self->c.has_key = 0;
    Py_RETURN_NONE;
}

PyObject *bkpy_config_text_sets(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *t, *k;
    if (!PyArg_ParseTuple(args, "UU:config_text_sets", &t, &k))
        return NULL;
    const char *text = text_arg(t, "config text"), *key = text ? text_arg(k, "a config key") : NULL;
    if (!key)
        return NULL;
    return PyBool_FromLong(bk_config_text_sets(text, key) == 1);
}

/* The index of key in the library's key table (its order: the variant
 * first, bits before hashes), or a large number for an unknown key (its
 * error comes when it is set). */
static unsigned key_rank(const char *key)
{
    for (unsigned i = 0; bk_config_key(i, NULL, 0, NULL); i++)
        if (strcmp(bk_config_key(i, NULL, 0, NULL), key) == 0)
            return i;
    return 1u << 20;
}

/* A ConfigError of the builder, naming the key it was about. */
static PyObject *build_error(int rc, const char *err, const char *key)
{
    bkpy_error(rc, "config", err[0] ? err : NULL);
    if (rc == BK_ECONFIG)
        set_where(key, 0);
    return NULL;
}

PyObject *bkpy_config_build(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *t, *pairs;
    if (!PyArg_ParseTuple(args, "UO:config_build", &t, &pairs))
        return NULL;
    const char *text = text_arg(t, "config text");
    PyObject *seq = text ? PySequence_Fast(pairs, "config_build: pairs is a sequence") : NULL;
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **kv = n ? PyMem_Calloc((size_t)n * 2, sizeof *kv) : NULL;
    if (n && !kv) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *k, *v;
        if (!PyArg_ParseTuple(pair, "UU:config_build pair", &k, &v) ||
            !(kv[2 * i] = text_arg(k, "a config key")) ||
            !(kv[2 * i + 1] = text_arg(v, "a config value"))) {
            PyMem_Free(kv);
            Py_DECREF(seq);
            return NULL;
        }
    }
    /* the pairs in the key table's order (stable: a key given twice is
     * refused on its second) */
    for (Py_ssize_t i = 1; i < n; i++)
        for (Py_ssize_t j = i; j > 0 && key_rank(kv[2 * j]) < key_rank(kv[2 * j - 2]); j--) {
            const char *a = kv[2 * j], *b = kv[2 * j + 1];
            kv[2 * j] = kv[2 * j - 2];
            kv[2 * j + 1] = kv[2 * j - 1];
            kv[2 * j - 2] = a;
            kv[2 * j - 1] = b;
        }
    bk_config_build b;
    bk_config_build_init(&b, NULL);
    bk_config_error e;
    char err[512] = "";
    int rc = bk_config_build_text(&b, text, &e);
    PyObject *out = NULL;
    if (rc != BK_OK) { /* the key and line at fault, as Config.read gives them */
        bkpy_error(rc, "config", e.message[0] ? e.message : NULL);
        if (rc == BK_ECONFIG)
            set_where(e.key[0] ? e.key : NULL, e.line);
    }
    for (Py_ssize_t i = 0; i < n && rc == BK_OK; i++)
        if ((rc = bk_config_build_set(&b, kv[2 * i], kv[2 * i + 1], err, sizeof err)) != BK_OK)
            build_error(rc, err, kv[2 * i]);
    bk_config c;
    if (rc == BK_OK && (rc = bk_config_build_finish(&b, &c, &e)) != BK_OK)
        build_error(rc, e.message, e.key[0] ? e.key : NULL);
    if (rc == BK_OK)
        out = bkpy_config_new(&c);
    PyMem_Free(kv);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef config_methods[] = {
    {"read", (PyCFunction)(void (*)(void))config_read, METH_O,
     "read(text): apply config text over these values (bk_config_read); ConfigError names the "
     "key and line at fault, and nothing changes."},
    {"set", (PyCFunction)(void (*)(void))config_set, METH_VARARGS,
     "set(key, value): one value of one key (bk_config_set)."},
    {"format", (PyCFunction)(void (*)(void))config_format, METH_VARARGS,
     "format(include_key=False) -> str: the configuration as config text."},
    {"diff", (PyCFunction)(void (*)(void))config_diff, METH_O,
     "diff(have) -> str | None: the first key whose value differs (bk_config_diff)."},
    {"copy", (PyCFunction)(void (*)(void))config_copy, METH_NOARGS, "A copy."},
    {"forget_key", (PyCFunction)(void (*)(void))config_forget_key, METH_NOARGS,
     "Count the hash key as not stated (has_key = 0)."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject bkpy_config_type = {
    /* the macro ends in a comma of its own */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bloomkit._native.Config",
    /* clang-format on */
    .tp_doc = "Config()\n--\n\nA filter configuration (struct bk_config), the defaults when made.",
    .tp_basicsize = sizeof(bkpy_config),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = config_tp_new,
    .tp_methods = config_methods,
};
