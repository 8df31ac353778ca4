#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-v") == 0)
            tally_verbose = 1;
    size_t n = 0, cap = 64, lineno = 0;
    double *values = malloc(cap * sizeof *values);
    char line[4096];
    if (values == NULL)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        double value;
        int r = parse_line(line, &value);
        if (r < 0) {
            fprintf(stderr, "error: line %zu: bad number\n", lineno);
            return 2;
        }
        if (r == 0)
            continue;
        if (n == cap) {
            cap *= 2;
            values = realloc(values, cap * sizeof *values);
            if (values == NULL)
                return 1;
        }
        values[n++] = value;
    }
    summary s;
    if (summarize(values, n, &s) != 0) {
        fprintf(stderr, "error: no numbers\n");
        return 1;
    }
    printf("count %zu\nmin %.2f\nmax %.2f\nmean %.2f\nmedian %.2f\n", s.count, s.min, s.max, s.mean, s.median);
    free(values);
    return 0;
}
