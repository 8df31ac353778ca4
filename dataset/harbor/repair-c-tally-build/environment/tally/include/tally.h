#ifndef TALLY_H
#define TALLY_H

#include <stddef.h>

/* Set by -v: print progress to stderr. */
int tally_verbose;

typedef struct {
    size_t count;
    double min, max, mean, median;
} summary;

/* 1: a number was read into *out; 0: blank or comment line; -1: not a number. */
int parse_line(const char *line, double *out);

/* 0 on success, -1 when n is 0 or memory runs out. */
int summarize(const double *values, size_t n, summary *out);

#endif
