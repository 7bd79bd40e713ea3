/*
 * links.c - a value's place in one of the module's lists of values (the
 * window filters sweep.c sweeps, the changed values held.c recounts): an
 * intrusive doubly linked list, so that joining and leaving cost O(1).
 */
#include "module.h"

static bkm_link *link_of(bkm_value *v, size_t at)
{
    return (bkm_link *)(void *)((char *)v + at);
}

void bkm_list_add(bkm_value **head, bkm_value *v, size_t at)
{
    bkm_link *l = link_of(v, at);
    if (l->in)
        return;
    l->prev = NULL;
    l->next = *head;
    if (*head)
        link_of(*head, at)->prev = v;
    *head = v;
    l->in = 1;
}

void bkm_list_remove(bkm_value **head, bkm_value *v, size_t at)
{
    bkm_link *l = link_of(v, at);
    if (!l->in)
        return;
    if (l->prev)
        link_of(l->prev, at)->next = l->next;
    else
        *head = l->next;
    if (l->next)
        link_of(l->next, at)->prev = l->prev;
    l->prev = l->next = NULL;
    l->in = 0;
}
