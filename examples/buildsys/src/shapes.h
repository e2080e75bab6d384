/* The shared library's interface: areas and perimeters of a few shapes. */
#ifndef SHAPES_H
#define SHAPES_H
double shape_area(const char *kind, double a, double b);
double shape_perimeter(const char *kind, double a, double b);
const char *shapes_version(void);
#endif
