#ifndef GEOM_H
#define GEOM_H

double circle_area(double r);
double circle_perimeter(double r);
double rect_area(double w, double h);
double rect_perimeter(double w, double h);
/* Heron's formula; -1 when the sides do not make a triangle. */
double triangle_area(double a, double b, double c);
double triangle_perimeter(double a, double b, double c);

#endif
