/* libshapes.so: a shared library with exported functions and a private helper, so the build
   systems link a DSO with -shared, a soname and an rpath for the program that uses it. */
#include <string.h>
#include "shapes.h"

static const double pi = 3.14159265358979323846;

static int is(const char *kind, const char *name) { return strcmp(kind, name) == 0; }

double shape_area(const char *kind, double a, double b) {
    if (is(kind, "circle")) return pi * a * a;
    if (is(kind, "rect")) return a * b;
    if (is(kind, "triangle")) return a * b / 2;
    return -1;
}

double shape_perimeter(const char *kind, double a, double b) {
    if (is(kind, "circle")) return 2 * pi * a;
    if (is(kind, "rect")) return 2 * (a + b);
    return -1;
}

const char *shapes_version(void) { return "shapes 1.0"; }
