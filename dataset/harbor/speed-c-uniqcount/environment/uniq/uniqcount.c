/* uniqcount: count the distinct lines of standard input.
 * Prints "COUNT<TAB>LINE" for every distinct line, the most frequent first, lines of equal count in
 * byte order (as strcmp orders them). Lines may be of any length; the last line may lack its newline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *text;
    long count;
} item;

int main(void)
{
    size_t n = 0, cap = 16;
    item *items = malloc(cap * sizeof *items);
    char buf[1024];
    while (fgets(buf, sizeof buf, stdin)) {
        buf[strcspn(buf, "\n")] = '\0';
        size_t i;
        for (i = 0; i < n; i++)
            if (strcmp(items[i].text, buf) == 0)
                break;
        if (i < n) {
            items[i].count++;
            continue;
        }
        if (n == cap) {
            cap *= 2;
            items = realloc(items, cap * sizeof *items);
        }
        items[n].text = strdup(buf);
        items[n].count = 1;
        n++;
    }
    /* insertion sort: count descending, then text */
    for (size_t i = 1; i < n; i++) {
        item x = items[i];
        size_t j = i;
        while (j > 0 && (items[j - 1].count < x.count ||
                         (items[j - 1].count == x.count && strcmp(items[j - 1].text, x.text) > 0))) {
            items[j] = items[j - 1];
            j--;
        }
        items[j] = x;
    }
    for (size_t i = 0; i < n; i++)
        printf("%ld\t%s\n", items[i].count, items[i].text);
    return 0;
}
