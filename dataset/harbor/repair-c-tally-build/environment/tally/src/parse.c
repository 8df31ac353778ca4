#include <ctype.h>
#include <stdlib.h>

#include "tally.h"

int parse_line(const char *line, double *out)
{
    while (isspace((unsigned char)*line))
        line++;
    if (*line == '\0' || *line == '#')
        return 0;
    char *end;
    double value = strtod(line, &end);
    if (end == line)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0' && *end != '#')
        return -1;
    *out = value;
    return 1;
}
