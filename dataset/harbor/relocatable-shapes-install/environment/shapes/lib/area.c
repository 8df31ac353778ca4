#include <math.h>

#include "geom.h"

double circle_area(double r) { return M_PI * r * r; }

double rect_area(double w, double h) { return w * h; }

double triangle_area(double a, double b, double c)
{
    if (a + b <= c || a + c <= b || b + c <= a)
        return -1;
    double s = (a + b + c) / 2;
    return sqrt(s * (s - a) * (s - b) * (s - c));
}
