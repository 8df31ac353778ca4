#!/bin/bash
cat > /app/uniq/uniqcount.c <<'EOF'
/* uniqcount: count the distinct lines of standard input.
 * Prints "COUNT<TAB>LINE" for every distinct line, the most frequent first, lines of equal count in
 * byte order (as strcmp orders them). Lines may be of any length; the last line may lack its newline.
 * A hash table (instead of a linear search) and qsort (instead of an insertion sort). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *text;
    long count;
} item;

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static int by_count(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->text, y->text);
}

int main(void)
{
    size_t n = 0, cap = 1024, slots = 2048;
    item *items = malloc(cap * sizeof *items);
    size_t *table = malloc(slots * sizeof *table); /* index + 1, 0 = empty */
    memset(table, 0, slots * sizeof *table);
    char *line = NULL;
    size_t size = 0;
    ssize_t len;
    while ((len = getline(&line, &size, stdin)) != -1) {
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        size_t h = hash(line) & (slots - 1);
        while (table[h] && strcmp(items[table[h] - 1].text, line) != 0)
            h = (h + 1) & (slots - 1);
        if (table[h]) {
            items[table[h] - 1].count++;
            continue;
        }
        if (n == cap) {
            cap *= 2;
            items = realloc(items, cap * sizeof *items);
        }
        items[n].text = strdup(line);
        items[n].count = 1;
        table[h] = ++n;
        if (2 * n > slots) { /* grow and rehash */
            free(table);
            slots *= 2;
            table = calloc(slots, sizeof *table);
            for (size_t i = 0; i < n; i++) {
                size_t k = hash(items[i].text) & (slots - 1);
                while (table[k])
                    k = (k + 1) & (slots - 1);
                table[k] = i + 1;
            }
        }
    }
    qsort(items, n, sizeof *items, by_count);
    for (size_t i = 0; i < n; i++)
        printf("%ld\t%s\n", items[i].count, items[i].text);
    return 0;
}
EOF
make -C /app/uniq clean
make -C /app/uniq
