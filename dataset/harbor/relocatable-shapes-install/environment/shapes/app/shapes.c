#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom.h"

static int usage(void)
{
    fprintf(stderr, "usage: shapes circle R | rect W H | triangle A B C\n");
    return 2;
}

int main(int argc, char **argv)
{
    double area, perimeter;
    if (argc == 3 && strcmp(argv[1], "circle") == 0) {
        double r = atof(argv[2]);
        area = circle_area(r);
        perimeter = circle_perimeter(r);
    } else if (argc == 4 && strcmp(argv[1], "rect") == 0) {
        double w = atof(argv[2]), h = atof(argv[3]);
        area = rect_area(w, h);
        perimeter = rect_perimeter(w, h);
    } else if (argc == 5 && strcmp(argv[1], "triangle") == 0) {
        double a = atof(argv[2]), b = atof(argv[3]), c = atof(argv[4]);
        area = triangle_area(a, b, c);
        if (area < 0) {
            fprintf(stderr, "shapes: invalid triangle\n");
            return 1;
        }
        perimeter = triangle_perimeter(a, b, c);
    } else {
        return usage();
    }
    printf("area %.3f perimeter %.3f\n", area, perimeter);
    return 0;
}
