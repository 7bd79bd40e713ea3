/*
 * py_figures.c - a filter's figures as Python sees them: stats()'s dict and
 * figures()'s list, both walked from the library's table (bk_figure_at), so
 * they carry its names, in its order.
 */
#include "bkpy.h"

/* One figure's value as a Python object (new reference), or NULL. */
static PyObject *figure_value(const bk_figure *fig)
{
    switch (fig->type) {
    case BK_FIGURE_TEXT:
        return PyUnicode_FromString(fig->text);
    case BK_FIGURE_COUNT:
        return PyLong_FromUnsignedLongLong((unsigned long long)fig->count);
    case BK_FIGURE_MS:
        return PyLong_FromLongLong((long long)fig->ms);
    case BK_FIGURE_REAL:
        break;
    }
    return PyFloat_FromDouble(fig->real);
}

/* A figure under a name into d: 0, or -1 with an exception. */
static int put(PyObject *d, const char *name, const bk_figure *fig)
{
    PyObject *v = figure_value(fig);
    const int rc = v ? PyDict_SetItemString(d, name, v) : -1;
    Py_XDECREF(v);
    return rc;
}

PyObject *bkpy_figures_dict(const bk_filter_stats *st, const bk_config *cfg)
{
    PyObject *d = PyDict_New();
    bk_figure fig;
    for (unsigned i = 0; d && bk_figure_at(i, st, cfg, &fig, sizeof fig) == 1; i++) {
        /* "fpr": target_fpr's name before the table, kept for 0.x callers */
        if (put(d, fig.name, &fig) < 0 ||
            (strcmp(fig.name, "target_fpr") == 0 && put(d, "fpr", &fig) < 0))
            Py_CLEAR(d);
    }
    return d;
}

PyObject *bkpy_figures(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    static const char *const types[] = {"str", "int", "float", "int"};
    PyObject *out = PyList_New(0);
    bk_figure fig;
    for (unsigned i = 0; out && bk_figure_at(i, NULL, NULL, &fig, sizeof fig) == 1; i++) {
        PyObject *variants = PyList_New(0);
        for (int v = 0; variants && bk_variant_name((bk_variant)v); v++) {
            PyObject *name = (fig.variants >> v) & 1u
                                 ? PyUnicode_FromString(bk_variant_name((bk_variant)v))
                                 : NULL;
            if ((fig.variants >> v) & 1u && (!name || PyList_Append(variants, name) < 0))
                Py_CLEAR(variants);
            Py_XDECREF(name);
        }
        PyObject *row =
            variants ? Py_BuildValue("(ssOs)", fig.name, types[fig.type], variants, fig.meaning)
                     : NULL;
        Py_XDECREF(variants);
        if (!row || PyList_Append(out, row) < 0)
            Py_CLEAR(out);
        Py_XDECREF(row);
    }
    return out;
}
