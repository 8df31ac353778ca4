#include <math.h>

#include "geom.h"

double circle_perimeter(double r) { return 2 * M_PI * r; }

double rect_perimeter(double w, double h) { return 2 * (w + h); }

double triangle_perimeter(double a, double b, double c) { return a + b + c; }
