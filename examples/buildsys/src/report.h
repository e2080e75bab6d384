/* The static library's interface: formatting a table of results. */
#ifndef REPORT_H
#define REPORT_H
void report_row(const char *name, double area, double perimeter);
int report_rows(void);
#endif
