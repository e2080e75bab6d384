/* The program: uses libshapes.so and libreport.a, and prints a table the tests compare. */
#include <stdio.h>
#include "report.h"
#include "shapes.h"

int main(void) {
    static const struct { const char *kind; double a, b; } shapes[] = {
        {"circle", 1.5, 0}, {"rect", 3, 4}, {"triangle", 3, 4},
    };
    printf("%s\n", shapes_version());
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        report_row(shapes[i].kind, shape_area(shapes[i].kind, shapes[i].a, shapes[i].b),
                   shape_perimeter(shapes[i].kind, shapes[i].a, shapes[i].b));
    printf("%d rows\n", report_rows());
    return report_rows() == 3 ? 0 : 1;
}
