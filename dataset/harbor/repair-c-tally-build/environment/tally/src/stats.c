#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (int)(x - y);
}

int summarize(const double *values, size_t n, summary *out)
{
    if (n == 0)
        return -1;
    double *sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return -1;
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_value);
    double sum = 0;
    out->min = out->max = values[0];
    for (size_t i = 0; i < n; i++) {
        sum += values[i];
        if (values[i] < out->min)
            out->min = values[i];
        if (values[i] > out->max)
            out->max = values[i];
    }
    out->count = n;
    out->mean = sum / n;
    out->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    if (tally_verbose)
        fprintf(stderr, "tally: summarized %zu values\n", n);
    free(sorted);
    return 0;
}
